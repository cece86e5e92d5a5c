/* SPDX-License-Identifier: MIT */
/* probe log's line parser (frontends/cli/log_parse.c) against the C
 * library: every number it converts, over random doubles printed with 6
 * to 20 significant digits and random bit patterns, must equal strtod()'s
 * correctly rounded value, whether the line is parsed or matched as a
 * template of the line before; and lines that are not JSON are refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log_parse.h"

int main(void)
{
  uint64_t r = 1;
  long bad = 0, n = 0;
  log_line l;
  log_tmpl t;
  memset(&l, 0, sizeof l);
  memset(&t, 0, sizeof t);
  char line[200], why[100];
  for (long i = 0; i < 2000000; i++) {
    r ^= r << 13;
    r ^= r >> 7;
    r ^= r << 17;
    double d;
    if (i % 3 == 0) {
      memcpy(&d, &r, 8);
      if (!isfinite(d))
        continue;
    } else {
      d = (double)(r >> 11) / 9007199254740992.0 * pow(10, (int)(r % 40) - 20);
    }
    char num[400];
    switch (i % 8) { /* 6 to 20 significant digits */
    case 0: snprintf(num, sizeof num, "%.17g", d); break;
    case 1: snprintf(num, sizeof num, "%.16g", d); break;
    case 2: snprintf(num, sizeof num, "%.15g", d); break;
    case 3: snprintf(num, sizeof num, "%.18g", d); break;
    case 4: snprintf(num, sizeof num, "%.20g", d); break;
    case 5: snprintf(num, sizeof num, "%.6e", d); break;
    case 6: snprintf(num, sizeof num, "%.19e", d); break;
    default: snprintf(num, sizeof num, "%.12f", d); break;
    }
    /* the key alternates: every other line repeats the template */
    int len = snprintf(line, sizeof line, "{\"key\":\"a%ld\",\"step\":1,\"value\":%s}",
                       i % 2 ? i : 0, num);
    if (len >= (int)sizeof line)
      continue;
    if (probe_log_parse(line, (size_t)len, &l, &t, why, sizeof why)) {
      printf("not parsed: %s: %s\n", num, why);
      return 1;
    }
    double want = strtod(num, NULL);
    n++;
    if (memcmp(&want, &l.value, 8) && bad++ < 10)
      printf("%s: got %.17g, strtod %.17g\n", num, l.value, want);
  }
  printf("%ld numbers, %ld differ from strtod\n", n, bad);
  static const char *const refused[] = {
      "{\"step\":1,\"value\":01}", "{\"step\":1,\"value\":1.}", "{\"step\":1,\"value\":.5}",
      "{\"step\":1,\"value\":1e}", "{\"step\":1,\"value\":+1}", "{\"step\":1,}",
      "{\"step\":1", "{\"a\":\"\\u12\"}", "{\"a\":\"\\ud800\"}", "{\"a\":\"x\ty\"}",
      "{\"a\":tru}", "{\"a\":1} {}", "{'a':1}", "{\"a\":[1,]}", "{\"a\":NaN}"};
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    char buf[100];
    size_t len = strlen(refused[i]);
    memcpy(buf, refused[i], len);
    if (probe_log_parse(buf, len, &l, &t, why, sizeof why) != -1) {
      printf("accepted: %s\n", refused[i]);
      bad++;
    }
  }
  char arr[] = "[1,2]";
  if (probe_log_parse(arr, 5, &l, &t, why, sizeof why) != -2) {
    printf("[1,2] is JSON but not an object\n");
    bad++;
  }
  probe_log_line_free(&l, &t);
  return bad ? 1 : 0;
}
