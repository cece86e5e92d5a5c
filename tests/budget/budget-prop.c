/* SPDX-License-Identifier: MIT */
/* Property test of the budget engine: randomly shaped results at random
 * budgets, every answer checked against its token budget
 * (counted by libprobemcp's o200k_base tokenizer) and byte ceiling, its
 * JSON shape (count, truncated, next_cursor), and the continuity of the
 * items across pages (none lost, none repeated; fragments in order).
 *
 *   budget-prop [--count N] [--seed S] [--out FILE]
 *
 * With --out, every answer is also written as a JSON line
 * {"budget":B,"text":...} for the second check with the tiktoken npm
 * package (check-tiktoken.cjs); --only I replays result I. Exit status 0
 * when every check held. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "probemcp/budget.h"
#include "probemcp/tokens.h"

static const unsigned char key[32] = "property-test-key-0123456789abcd";

static uint64_t mix(uint64_t x)
{
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

typedef struct rng {
  uint64_t s;
} rng;

static uint64_t rnext(rng *r)
{
  r->s = mix(r->s);
  return r->s;
}

static size_t rrange(rng *r, size_t lo, size_t hi)
{
  return lo + (size_t)(rnext(r) % (uint64_t)(hi - lo + 1));
}

static void put_cp(char **p, uint32_t c)
{
  unsigned char *o = (unsigned char *)*p;
  if (c < 0x80) {
    *o++ = (unsigned char)c;
  } else if (c < 0x800) {
    *o++ = (unsigned char)(0xC0 | c >> 6);
    *o++ = (unsigned char)(0x80 | (c & 63));
  } else if (c < 0x10000) {
    *o++ = (unsigned char)(0xE0 | c >> 12);
    *o++ = (unsigned char)(0x80 | ((c >> 6) & 63));
    *o++ = (unsigned char)(0x80 | (c & 63));
  } else {
    *o++ = (unsigned char)(0xF0 | c >> 18);
    *o++ = (unsigned char)(0x80 | ((c >> 12) & 63));
    *o++ = (unsigned char)(0x80 | ((c >> 6) & 63));
    *o++ = (unsigned char)(0x80 | (c & 63));
  }
  *p = (char *)o;
}

/* Random valid UTF-8 of about @p len bytes into a malloc'd buffer. */
static char *rtext(rng *r, size_t len, size_t *out_len)
{
  static const char *pieces[] = {
    "the ", "Loss", " val_acc ", "0.8125", "1234567", ", ", "\n", "\t",
    "\"", "\\", "don't", "THEY'LL", "run:abc-12", "\xC3\xA9t\xC3\xA9",
    "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", "\xF0\x9F\x98\x80",
    "\xE2\x80\x94", "<|endoftext|>", "    ", "{\"a\":1}", "\x01", "\r\n",
  };
  char *b = malloc(len + 16 + 4 * 300);
  char *p = b;
  while ((size_t)(p - b) < len) {
    uint64_t k = rnext(r) % 100;
    if (k < 78) {
      const char *s = pieces[rnext(r) % (sizeof pieces / sizeof *pieces)];
      size_t n = strlen(s);
      memcpy(p, s, n);
      p += n;
    } else if (k < 80) { /* a run of one character */
      size_t n = rnext(r) % 8 ? rrange(r, 2, 40) : rrange(r, 40, 300);
      char c = " a9-."[rnext(r) % 5];
      if ((size_t)(p - b) + n > len + 200)
        n = 1;
      memset(p, c, n);
      p += n;
    } else { /* any scalar value, every plane */
      uint32_t c;
      do {
        uint64_t plane = rnext(r) % 6;
        c = (uint32_t)((plane < 3 ? 0 : plane == 3 ? 1 : plane == 4 ? 2 : 14) * 0x10000 +
                       rnext(r) % 0x10000);
      } while (c == 0 || (c >= 0xD800 && c <= 0xDFFF));
      put_cp(&p, c);
    }
  }
  *out_len = (size_t)(p - b);
  *p = '\0';
  return b;
}

/* The shape of one result, from its seed. */
typedef struct shape {
  uint64_t seed;
  size_t n;           /* items */
  int kind;           /* 0 objects, 1 arrays, 2 objects + rare huge, 3 documents */
  size_t item_size;   /* typical text size */
  int head_fields;
  int tail_field;     /* a field added after the items */
  int lossless;
  char list[16];
} shape;

static shape make_shape(uint64_t seed)
{
  rng r = {seed};
  shape s;
  memset(&s, 0, sizeof s);
  s.seed = seed;
  uint64_t k = rnext(&r) % 10;
  s.n = k < 2 ? rrange(&r, 0, 5) : k < 8 ? rrange(&r, 5, 120) : rrange(&r, 100, 600);
  s.kind = (int)(rnext(&r) % 4);
  if (getenv("PMCP_PROP_KIND"))
    s.kind = atoi(getenv("PMCP_PROP_KIND"));
  s.item_size = rnext(&r) % 4 == 0 ? rrange(&r, 200, 3000) : rrange(&r, 0, 120);
  if (s.kind == 3)
    s.item_size = rrange(&r, 0, 4) == 0 ? rrange(&r, 20000, 90000) : rrange(&r, 10, 6000);
  s.head_fields = (int)rrange(&r, 0, 4);
  s.tail_field = rnext(&r) % 3 == 0;
  s.lossless = rnext(&r) % 5 == 0;
  static const char *names[] = {"items", "runs", "results", "rows", "series"};
  strcpy(s.list, names[rnext(&r) % 5]);
  return s;
}

static double rnum(rng *r)
{
  uint64_t k = rnext(r) % 40;
  if (k == 0)
    return NAN;
  if (k == 1)
    return k % 2 ? INFINITY : -INFINITY;
  double v = (double)(rnext(r) >> 11) / 9007199254740992.0;
  return (rnext(r) % 2 ? -1 : 1) * v * pow(10.0, (double)rrange(r, 0, 12) - 6.0);
}

typedef struct stats {
  size_t results, responses, errors_budget, errors_other, truncated_pages;
  size_t items, fragments;
  double fill_sum;
  double worst_ratio;
  double page_ns, write_ns;
  size_t counted_bytes, answer_bytes;
  size_t exact_estimates, estimated_pages, dropped;
  size_t failures;
} stats;

#define FAIL(st, ...)                                                   \
  do {                                                                  \
    (st)->failures++;                                                   \
    if ((st)->failures <= 20) {                                         \
      fprintf(stderr, "FAIL result %zu: ", (st)->results);             \
      fprintf(stderr, __VA_ARGS__);                                     \
      fputc('\n', stderr);                                              \
    }                                                                   \
  } while (0)

static double now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One call: builds the page of @p sh from @p cursor at @p budget. */
static int one_page(const shape *sh, int budget, const char *cursor, pmcp_buf *out,
                    int *is_error, stats *st)
{
  char args[128];
  snprintf(args, sizeof args, "{\"seed\":%llu,\"list\":\"%s\"}",
           (unsigned long long)sh->seed, sh->list);
  pmcp_page_options o = PMCP_PAGE_OPTIONS_INIT;
  o.token_budget = budget;
  o.tool = "prop";
  o.args_json = args;
  o.cursor = cursor;
  o.key = key;
  o.key_len = sizeof key;
  o.flags = sh->lossless ? PMCP_PAGE_LOSSLESS : 0;
  pmcp_page *pg;
  double t0 = now_ns();
  if (pmcp_page_new(&pg, &o))
    return -1;
  st->page_ns += now_ns() - t0;
  const void *pos;
  size_t pos_len;
  int more = 0;
  if (pmcp_page_position(pg, &pos, &pos_len) == 0) {
    uint32_t start = 0;
    if (pos_len == sizeof start)
      memcpy(&start, pos, sizeof start);
    rng hr = {sh->seed ^ 0xABCDEF};
    for (int f = 0; f < sh->head_fields; f++) {
      char name[16];
      snprintf(name, sizeof name, "f%d", f);
      uint64_t k = rnext(&hr) % 3;
      if (k == 0) {
        size_t n;
        char *t = rtext(&hr, rrange(&hr, 0, 300), &n);
        pmcp_page_field_string(pg, name, t);
        free(t);
      } else if (k == 1) {
        pmcp_page_field_number(pg, name, rnum(&hr));
      } else {
        pmcp_page_field_int(pg, name, (int64_t)rnext(&hr));
      }
    }
    if (sh->tail_field)
      pmcp_page_reserve(pg, 24);
    pmcp_page_list(pg, sh->list);
    for (uint32_t i = start; i < sh->n; i++) {
      rng ir = {sh->seed * 1000003u + i};
      uint32_t next = i + 1;
      int rc;
      if (sh->kind == 3) {
        size_t n;
        char *t = rtext(&ir, rrange(&ir, 0, sh->item_size), &n);
        char members[48];
        snprintf(members, sizeof members, "\"i\":%u", i);
        pmcp_fragment fr = PMCP_FRAGMENT_INIT;
        fr.text = t;
        fr.len = n;
        fr.members_json = members;
        fr.resume_at = &i;
        fr.resume_at_len = sizeof i;
        fr.resume_after = &next;
        fr.resume_after_len = sizeof next;
        double t1 = now_ns();
        rc = pmcp_page_add_fragment(pg, &fr);
        st->page_ns += now_ns() - t1;
        free(t);
      } else {
        double t1 = now_ns();
        pmcp_json *j = pmcp_page_item(pg);
        if (sh->kind == 1) {
          pmcp_json_array_begin(j);
          pmcp_json_int(j, i);
          size_t m = rrange(&ir, 0, sh->item_size / 4 + 1);
          for (size_t k = 0; k < m; k++)
            pmcp_json_number(j, rnum(&ir));
          pmcp_json_array_end(j);
        } else {
          size_t len = rrange(&ir, 0, sh->item_size);
          if (sh->kind == 2 && rnext(&ir) % 60 == 0)
            len = rrange(&ir, 5000, 60000);
          size_t n;
          char *t = rtext(&ir, len, &n);
          pmcp_json_object_begin(j);
          pmcp_json_key(j, "i");
          pmcp_json_int(j, i);
          pmcp_json_key(j, "v");
          pmcp_json_number(j, rnum(&ir));
          pmcp_json_key(j, "text");
          pmcp_json_string_n(j, t, n);
          pmcp_json_object_end(j);
          free(t);
        }
        double t2 = now_ns();
        rc = pmcp_page_commit(pg, &next, sizeof next);
        st->write_ns += t2 - t1;
        st->page_ns += now_ns() - t2;
      }
      if (rc) {
        more = 1;
        break;
      }
      st->items++;
    }
    if (sh->tail_field) {
      int frc = pmcp_page_field_int(pg, "total", (int64_t)sh->n);
      if (frc && getenv("PMCP_PROP_DEBUG"))
        fprintf(stderr, "total field: %d (items %zu, more %d)\n", frc,
                pmcp_page_count(pg), more);
    }
  }
  double t3 = now_ns();
  int rc = pmcp_page_render(pg, more, out, is_error);
  st->page_ns += now_ns() - t3;
  pmcp_page_stats ps;
  if (!rc && !pmcp_page_stats_get(pg, &ps)) {
    st->counted_bytes += ps.counted_bytes;
    st->answer_bytes += out->len;
    if (!*is_error) {
      st->estimated_pages++;
      st->exact_estimates += ps.estimate == ps.tokens;
      st->dropped += ps.dropped;
    }
  }
  pmcp_page_free(pg);
  return rc;
}

static void write_line(FILE *f, int budget, const pmcp_buf *text)
{
  if (!f)
    return;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "budget", budget);
  cJSON_AddItemToObject(o, "text", cJSON_CreateString(text->ptr));
  char *s = cJSON_PrintUnformatted(o);
  fputs(s, f);
  fputc('\n', f);
  free(s);
  cJSON_Delete(o);
}

static int random_budget(rng *r)
{
  uint64_t k = rnext(r) % 10;
  if (k < 5)
    return (int)rrange(r, 512, 1500);
  if (k < 9)
    return (int)rrange(r, 1500, 8000);
  return k % 2 ? 512 : 8000;
}

static void run_result(uint64_t seed, FILE *out, stats *st)
{
  shape sh = make_shape(seed);
  rng br = {seed ^ 0x5151};
  pmcp_buf text = {0};
  char *cursor = NULL;
  uint32_t want = 0;
  int partial = 0;
  /* Every 16th result is followed through up to 120 pages (continuity of
   * the items across pages, with a new budget each page); the others are
   * one answer each. */
  int max_pages = seed % 16 == 0 ? 120 : 1;
  for (int page = 0; page < max_pages; page++) {
    int budget = random_budget(&br);
    int is_error = 0;
    text.len = 0;
    if (one_page(&sh, budget, cursor, &text, &is_error, st)) {
      FAIL(st, "page could not be built");
      break;
    }
    st->responses++;
    write_line(out, budget, &text);
    size_t tokens = 0;
    if (pmcp_tokens_count(text.ptr, text.len, &tokens))
      FAIL(st, "answer is not valid UTF-8");
    if (tokens > (size_t)budget)
      FAIL(st, "%zu tokens over budget %d", tokens, budget);
    if (text.len > (size_t)budget * 8)
      FAIL(st, "%zu bytes over ceiling %d", text.len, budget * 8);
    double ratio = (double)tokens / budget;
    if (ratio > st->worst_ratio)
      st->worst_ratio = ratio;
    cJSON *v = cJSON_ParseWithLength(text.ptr, text.len);
    if (!cJSON_IsObject(v)) {
      FAIL(st, "not a JSON object: %.200s", text.ptr);
      cJSON_Delete(v);
      break;
    }
    free(cursor);
    cursor = NULL;
    if (is_error) {
      cJSON *m = cJSON_GetObjectItem(v, "message");
      if (!cJSON_IsString(m))
        FAIL(st, "error without message");
      if (cJSON_GetObjectItem(v, "min_token_budget"))
        st->errors_budget++;
      else {
        st->errors_other++;
        FAIL(st, "unexpected error: %.300s", text.ptr);
      }
      cJSON_Delete(v);
      break;
    }
    cJSON *items = cJSON_GetObjectItem(v, sh.list);
    cJSON *count = cJSON_GetObjectItem(v, "count");
    cJSON *nc = cJSON_GetObjectItem(v, "next_cursor");
    if (!cJSON_IsArray(items) || !cJSON_IsNumber(count) ||
        cJSON_GetArraySize(items) != (int)count->valuedouble)
      FAIL(st, "count does not match the list");
    if (cJSON_IsTrue(cJSON_GetObjectItem(v, "truncated")) != (nc != NULL))
      FAIL(st, "truncated disagrees with next_cursor");
    if (sh.tail_field && !cJSON_IsNumber(cJSON_GetObjectItem(v, "total")))
      FAIL(st, "the field added after the items is missing (%zu bytes, budget %d): ...%s", text.len, budget, text.ptr + (text.len > 300 ? text.len - 300 : 0));
    cJSON *it;
    cJSON_ArrayForEach(it, items) {
      cJSON *idx = cJSON_IsArray(it) ? cJSON_GetArrayItem(it, 0) : cJSON_GetObjectItem(it, "i");
      uint32_t k = (uint32_t)idx->valuedouble;
      if (k != want)
        FAIL(st, "item %u where %u was due (partial %d)", k, want, partial);
      cJSON *data = cJSON_GetObjectItem(it, "data");
      cJSON *complete = data ? cJSON_GetObjectItem(data, "complete") : NULL;
      if (complete && !cJSON_IsTrue(complete)) {
        partial = 1;
        st->fragments++;
      } else {
        if (complete)
          st->fragments++;
        partial = 0;
        want = k + 1;
      }
    }
    if (nc) {
      st->truncated_pages++;
      st->fill_sum += ratio;
      cursor = strdup(nc->valuestring);
    }
    cJSON_Delete(v);
    if (!cursor || page + 1 == max_pages) {
      if (!cursor && want != sh.n)
        FAIL(st, "ended at item %u of %zu", want, sh.n);
      break;
    }
  }
  free(cursor);
  free(text.ptr);
}

int main(int argc, char **argv)
{
#if defined(__SANITIZE_ADDRESS__)
  /* Under the sanitizers the point is memory safety, not the statistics:
   * a fifth of the results keeps the CI's second pass short. */
  size_t count = 2000;
#else
  size_t count = 10000;
#endif
  uint64_t seed = 0x5EED;
  const char *out_path = NULL;
  long long only = -1; /* replay one result (debugging) */
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--count") && i + 1 < argc)
      count = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
      seed = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--only") && i + 1 < argc)
      only = strtoll(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--out") && i + 1 < argc)
      out_path = argv[++i];
    else {
      fprintf(stderr, "usage: %s [--count N] [--seed S] [--out FILE] [--only I]\n",
              argv[0]);
      return 2;
    }
  }
  FILE *out = NULL;
  if (out_path && !(out = fopen(out_path, "w"))) {
    perror(out_path);
    return 2;
  }
  stats st;
  memset(&st, 0, sizeof st);
  double t0 = now_ns();
  for (size_t r = 0; r < count; r++) {
    if (only >= 0 && r != (size_t)only)
      continue;
    st.results = r;
    run_result(mix(seed + r), out, &st);
  }
  double secs = (now_ns() - t0) / 1e9;
  if (out)
    fclose(out);
  printf("results %zu, answers %zu (%zu cut with next_cursor, %zu min_token_budget "
         "refusals), items %zu, fragments %zu\n",
         count, st.responses, st.truncated_pages, st.errors_budget, st.items,
         st.fragments);
  printf("largest answer: %.4f of its budget; cut pages filled to %.1f%% of their "
         "budget on average\n",
         st.worst_ratio, st.truncated_pages ? 100.0 * st.fill_sum / st.truncated_pages : 0);
  printf("CPU time %.2f s; page builder %.0f ns per item kept (writing the items' JSON: "
         "%.0f ns per item)\n",
         secs, st.items ? st.page_ns / st.items : 0, st.items ? st.write_ns / st.items : 0);
  printf("running count equal to the final full count on %zu of %zu pages "
         "(items dropped at the final check: %zu)\n",
         st.exact_estimates, st.estimated_pages, st.dropped);
  printf("bytes handed to the tokenizer per byte answered: %.2f\n",
         st.answer_bytes ? (double)st.counted_bytes / st.answer_bytes : 0);
  if (st.failures) {
    printf("%zu FAILURES\n", st.failures);
    return 1;
  }
  printf("every answer within its token budget and byte ceiling\n");
  return 0;
}
