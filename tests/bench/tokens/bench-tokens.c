/* SPDX-License-Identifier: MIT */
/* Benchmark worker of the o200k_base tokenizer (run.cjs drives it and the
 * npm tokenizers side by side; it is built, never run as a test).
 *
 *   bench-tokens first                time from main() to the first count, RSS
 *   bench-tokens count FILE RUNS      count FILE RUNS times (whole text)
 *   bench-tokens counter FILE RUNS    same through pmcp_tokens_counter in 4 KiB chunks
 *   bench-tokens small FILE RUNS      count FILE cut into 200-byte strings
 *   bench-tokens floor FILE RUNS      the floor: memchr for newlines plus UTF-8
 *                                     validation over the same bytes
 *   bench-tokens curve KIND N...      one piece of N bytes of KIND (a, cjk,
 *                                     digits, spaces), each N counted until
 *                                     0.3 s of CPU have passed; prints ns/byte
 *
 * Prints one JSON object: tokens, bytes, times (CPU s), wall_times (s), rss_kb before and after
 * (VmRSS) and hwm_kb (VmHWM). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probemcp/probemcp.h"

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of this process: on a machine shared with other jobs the wall
 * clock mostly measures waiting for a core. */
static double cpu_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long status_kb(const char *key)
{
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  size_t kl = strlen(key);
  if (!f)
    return -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, key, kl) == 0 && line[kl] == ':')
      v = strtol(line + kl + 1, NULL, 10);
  fclose(f);
  return v;
}

static char *slurp(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
    fprintf(stderr, "bench-tokens: cannot read %s\n", path);
    exit(1);
  }
  fclose(f);
  *len = (size_t)n;
  return b;
}

/* Fills @p t with @p n bytes of one long run: 'a', CJK characters drawn
 * from a few hundred common ones (one long word), digits, or spaces. */
static size_t fill_run(char *t, size_t n, const char *kind)
{
  if (strcmp(kind, "cjk") == 0) {
    uint32_t x = 12345;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
      x = x * 1103515245u + 12345u;
      unsigned cp = 0x4E00 + (x >> 16) % 600; /* the most common block start */
      t[i] = (char)(0xE0 | cp >> 12);
      t[i + 1] = (char)(0x80 | ((cp >> 6) & 0x3F));
      t[i + 2] = (char)(0x80 | (cp & 0x3F));
    }
    return i;
  }
  char c = strcmp(kind, "digits") == 0 ? '7' : strcmp(kind, "spaces") == 0 ? ' ' : 'a';
  if (strcmp(kind, "digits") == 0)
    for (size_t i = 0; i < n; i++)
      t[i] = (char)('0' + (i * 7 + i / 10) % 10);
  else
    memset(t, c, n);
  return n;
}

static int curve(int argc, char **argv)
{
  const char *kind = argv[2];
  printf("{\"mode\":\"curve\",\"kind\":\"%s\",\"points\":[", kind);
  for (int a = 3; a < argc; a++) {
    size_t n = strtoull(argv[a], NULL, 10);
    char *t = malloc(n ? n : 1);
    if (!t)
      return 1;
    n = fill_run(t, n, kind);
    double best = 0, total = 0;
    int reps = 0;
    size_t k = 0;
    while (total < 0.3 || reps < 3) {
      double t0 = cpu_now();
      if (pmcp_tokens_count(t, n, &k) != 0)
        return 1;
      double dt = cpu_now() - t0;
      if (!reps || dt < best)
        best = dt;
      total += dt;
      reps++;
    }
    printf("%s{\"bytes\":%zu,\"tokens\":%zu,\"reps\":%d,\"ns_per_byte_min\":%.2f,"
           "\"ns_per_byte_mean\":%.2f}", a > 3 ? "," : "", n, k, reps, best * 1e9 / (double)n,
           total / reps * 1e9 / (double)n);
    free(t);
  }
  printf("]}\n");
  return 0;
}

int main(int argc, char **argv)
{
  double t_main = now();
  if (argc >= 4 && strcmp(argv[1], "curve") == 0)
    return curve(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "first") == 0) {
    long rss0 = status_kb("VmRSS");
    static const char hello[] = "Hello, world! Time to first count.";
    size_t n;
    if (pmcp_tokens_count(hello, sizeof hello - 1, &n) != 0)
      return 1;
    double t = now() - t_main;
    printf("{\"mode\":\"first\",\"tokens\":%zu,\"first_count_s\":%.6f,\"rss_kb_before\":%ld,"
           "\"rss_kb\":%ld}\n", n, t, rss0, status_kb("VmRSS"));
    return 0;
  }
  if (argc != 4) {
    fprintf(stderr, "usage: bench-tokens first | (count|counter|small|floor) FILE RUNS | curve KIND N...\n");
    return 2;
  }
  const char *mode = argv[1];
  size_t len;
  char *text = slurp(argv[2], &len);
  int runs = atoi(argv[3]);
  long rss0 = status_kb("VmRSS");
  size_t tokens = 0;
  double *walls = calloc((size_t)(runs > 0 ? runs : 1), sizeof *walls);
  printf("{\"mode\":\"%s\",\"bytes\":%zu,\"times\":[", mode, len);
  for (int r = 0; r < runs; r++) {
    double w0 = now(), t0 = cpu_now();
    size_t n = 0;
    int rc = 0;
    if (strcmp(mode, "count") == 0) {
      rc = pmcp_tokens_count(text, len, &n);
    } else if (strcmp(mode, "counter") == 0) {
      pmcp_tokens_counter *c;
      rc = pmcp_tokens_counter_new(&c);
      for (size_t off = 0; rc == 0 && off < len; off += 4096)
        rc = pmcp_tokens_counter_add(c, text + off, len - off < 4096 ? len - off : 4096);
      if (rc == 0)
        rc = pmcp_tokens_counter_total(c, &n);
      pmcp_tokens_counter_free(c);
    } else if (strcmp(mode, "small") == 0) {
      /* many small strings, as the budget engine counts them; cuts fall on
       * character boundaries */
      size_t off = 0;
      while (rc == 0 && off < len) {
        size_t e = off + 200 < len ? off + 200 : len;
        while (e < len && ((unsigned char)text[e] & 0xC0) == 0x80)
          e++;
        size_t k;
        rc = pmcp_tokens_count(text + off, e - off, &k);
        n += k;
        off = e;
      }
    } else if (strcmp(mode, "floor") == 0) {
      /* what any tokenizer must at least do: look at every byte (memchr)
       * and validate the UTF-8 */
      size_t off = 0;
      const char *q;
      while ((q = memchr(text + off, '\n', len - off)) != NULL) {
        n++;
        off = (size_t)(q - text) + 1;
      }
      rc = pmcp_tokens_utf8_check(text, len, NULL);
    } else {
      fprintf(stderr, "bench-tokens: unknown mode %s\n", mode);
      return 2;
    }
    if (rc != 0) {
      fprintf(stderr, "bench-tokens: %s\n", pmcp_strerror(rc));
      return 1;
    }
    tokens = n;
    printf("%s%.6f", r ? "," : "", cpu_now() - t0);
    walls[r] = now() - w0;
  }
  printf("],\"wall_times\":[");
  for (int r = 0; r < runs; r++)
    printf("%s%.6f", r ? "," : "", walls[r]);
  free(walls);
  printf("],\"tokens\":%zu,\"rss_kb_before\":%ld,\"rss_kb\":%ld,\"hwm_kb\":%ld}\n", tokens, rss0,
         status_kb("VmRSS"), status_kb("VmHWM"));
  free(text);
  return 0;
}
