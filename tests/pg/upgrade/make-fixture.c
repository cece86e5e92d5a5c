/* SPDX-License-Identifier: MIT */
/* Makes the PostgreSQL upgrade test's fixture with the code of an older
 * commit (make-fixture.sh builds this against it): fills a new store with
 * the series of ../upgrade_reads.h, then prints every read of them, as
 * that code returns them, to the expectations file.
 * Usage: make-fixture STORE-URL EXPECTED-FILE */
#include <stdio.h>

#include "../upgrade_reads.h"

int main(int argc, char **argv)
{
  if (argc != 3) {
    fprintf(stderr, "usage: %s STORE-URL EXPECTED-FILE\n", argv[0]);
    return 2;
  }
  pmcp_store *s = NULL;
  int rc = pmcp_store_open(&s, argv[1], PMCP_STORE_CREATE);
  if (rc == 0)
    rc = upg_fill(s);
  if (rc) {
    fprintf(stderr, "fill: %s\n", pmcp_store_errmsg(s));
    pmcp_store_free(s);
    return 1;
  }
  pmcp_store_free(s);
  s = NULL;
  FILE *f = fopen(argv[2], "w");
  if (!f) {
    perror(argv[2]);
    return 1;
  }
  rc = pmcp_store_open(&s, argv[1], 0);
  if (rc == 0)
    rc = upg_reads(f, s);
  if (rc)
    fprintf(stderr, "reads: %s\n", pmcp_store_errmsg(s));
  pmcp_store_free(s);
  return fclose(f) || rc ? 1 : 0;
}
