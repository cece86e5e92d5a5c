/* SPDX-License-Identifier: MIT */
/* Page-builder overhead: the time a page spends per item kept (counting,
 * fitting, cursor near the edge, final full count) against the time to
 * write the item's JSON, for small and large items at a few budgets; and
 * the time to cut a large document into fragments. Prints figures; it is
 * never run as a test. Times are CPU time of the thread (the figures hold on
 * a loaded machine).
 *
 *   build/tests/bench/budget/budget-bench [ROUNDS] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probemcp/budget.h"
#include "probemcp/tokens.h"

static const unsigned char key[32] = "bench-key-0123456789abcdef012345";

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static pmcp_page *new_page(int budget)
{
  pmcp_page_options o = PMCP_PAGE_OPTIONS_INIT;
  o.token_budget = budget;
  o.tool = "bench";
  o.args_json = "{\"mode\":\"runs\"}";
  o.key = key;
  o.key_len = sizeof key;
  pmcp_page *pg = NULL;
  if (pmcp_page_new(&pg, &o))
    abort();
  return pg;
}

static void write_item(pmcp_json *j, uint32_t i, size_t text_len)
{
  char text[4096];
  size_t n = 0;
  while (n + 40 < text_len && n + 40 < sizeof text)
    n += (size_t)snprintf(text + n, sizeof text - n, "step %u loss %.5f acc %.3f; ",
                          i, 1.0 / (i + n + 1), (double)(n % 97) / 97.0);
  pmcp_json_object_begin(j);
  pmcp_json_key(j, "ref");
  char ref[32];
  snprintf(ref, sizeof ref, "run:r-%06u", i);
  pmcp_json_string(j, ref);
  pmcp_json_key(j, "loss");
  pmcp_json_number(j, 1.0 / (i + 3));
  pmcp_json_key(j, "notes");
  pmcp_json_string_n(j, text, n);
  pmcp_json_object_end(j);
}

static void bench_items(int budget, size_t text_len, int rounds)
{
  double t_page = 0, t_write = 0;
  size_t kept = 0, pages = 0, tokens = 0;
  pmcp_json *w;
  pmcp_json_new(&w, 0);
  for (int r = 0; r < rounds; r++) {
    /* the JSON alone, as a tool would write it anyway */
    double t0 = now();
    for (uint32_t i = 0; i < 50; i++) {
      pmcp_json_reset(w);
      write_item(w, i, text_len);
    }
    t_write += (now() - t0) / 50;
    pmcp_page *pg = new_page(budget);
    t0 = now();
    pmcp_page_field_string(pg, "mode", "runs");
    pmcp_page_list(pg, "runs");
    double t_items = 0;
    uint32_t i = 0;
    for (;; i++) {
      double a = now();
      pmcp_json *j = pmcp_page_item(pg);
      write_item(j, i, text_len);
      t_items += now() - a;
      if (pmcp_page_commit(pg, &i, sizeof i))
        break;
    }
    pmcp_buf out = PMCP_BUF_INIT;
    int is_error;
    pmcp_page_render(pg, 1, &out, &is_error);
    t_page += now() - t0 - t_items;
    kept += pmcp_page_count(pg);
    pmcp_page_stats st;
    pmcp_page_stats_get(pg, &st);
    tokens += st.tokens;
    pages++;
    pmcp_buf_dispose(&out);
    pmcp_page_free(pg);
  }
  pmcp_json_free(w);
  printf("items of ~%4zu bytes, budget %4d: %5.1f items/page, page fill %5.1f%%, "
         "page builder %6.2f us/item (writing the JSON %5.2f us/item)\n",
         text_len, budget, (double)kept / pages, 100.0 * tokens / pages / budget,
         t_page / kept * 1e6, t_write / rounds * 1e6);
}

static void bench_fragments(int budget, size_t doc_len, int rounds)
{
  char *doc = malloc(doc_len + 64);
  size_t n = 0;
  while (n < doc_len)
    n += (size_t)snprintf(doc + n, doc_len + 64 - n,
                          "Line %zu of the notes \xE2\x80\x94 r\xC3\xA9sum\xC3\xA9, lr=3e-4.\n", n);
  double t = 0;
  size_t bytes = 0, counted = 0, calls = 0;
  for (int r = 0; r < rounds; r++) {
    pmcp_page *pg = new_page(budget);
    pmcp_page_list(pg, "items");
    pmcp_fragment f = PMCP_FRAGMENT_INIT;
    f.text = doc;
    f.len = n;
    f.members_json = "\"ref\":\"artifact:notes\"";
    double t0 = now();
    pmcp_page_add_fragment(pg, &f);
    pmcp_buf out = PMCP_BUF_INIT;
    int is_error;
    pmcp_page_render(pg, 1, &out, &is_error);
    t += now() - t0;
    bytes += out.len;
    pmcp_page_stats ps;
    pmcp_page_stats_get(pg, &ps);
    counted += ps.counted_bytes;
    calls += ps.counts;
    pmcp_buf_dispose(&out);
    pmcp_page_free(pg);
  }
  printf("first fragment of a %zu-byte document, budget %4d: %.2f ms per page "
         "(%zu bytes per page; tokenizer calls %zu, %.1f bytes counted per byte)\n",
         n, budget, t / rounds * 1e3, bytes / rounds, calls / rounds,
         (double)counted / (double)bytes);
  free(doc);
}

int main(int argc, char **argv)
{
  int rounds = argc > 1 ? atoi(argv[1]) : 20;
  if (rounds < 1)
    rounds = 1;
  bench_items(512, 60, rounds);
  bench_items(2000, 60, rounds);
  bench_items(8000, 60, rounds);
  bench_items(2000, 600, rounds);
  bench_items(8000, 2000, rounds);
  bench_fragments(2000, 1 << 20, rounds);
  bench_fragments(8000, 1 << 20, rounds);
  return 0;
}
