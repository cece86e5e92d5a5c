/* SPDX-License-Identifier: MIT */
/* Standalone fuzz driver: replays inputs through a libFuzzer-style target
 * (LLVMFuzzerTestOneInput) without libFuzzer, so the corpora run as plain
 * meson tests in suite 'fuzz' with any compiler. Each argument is a file or
 * a folder (its regular files, in name order). A crash or a sanitizer
 * report fails the test; otherwise prints how many inputs ran. With
 * -Dfuzzing=true the same targets link against libFuzzer instead. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "driver: cannot open %s\n", path);
    return -1;
  }
  size_t cap = 4096, len = 0;
  uint8_t *buf = malloc(cap);
  for (;;) {
    if (!buf) {
      fclose(f);
      return -1;
    }
    len += fread(buf + len, 1, cap - len, f);
    if (len < cap)
      break;
    cap *= 2;
    uint8_t *nb = realloc(buf, cap);
    if (!nb)
      free(buf);
    buf = nb;
  }
  fclose(f);
  /* an exact-size copy, so reads past the end are caught by ASan */
  uint8_t *exact = malloc(len ? len : 1);
  if (!exact) {
    free(buf);
    return -1;
  }
  memcpy(exact, buf, len);
  free(buf);
  LLVMFuzzerTestOneInput(exact, len);
  free(exact);
  return 0;
}

static int cmp(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path, int *count)
{
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "driver: no such input %s\n", path);
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) {
    if (run_file(path) != 0)
      return -1;
    ++*count;
    return 0;
  }
  DIR *d = opendir(path);
  if (!d)
    return -1;
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      char **nn = realloc(names, cap * sizeof *nn);
      if (!nn)
        break;
      names = nn;
    }
    names[n] = malloc(strlen(path) + strlen(e->d_name) + 2);
    if (!names[n])
      break;
    sprintf(names[n], "%s/%s", path, e->d_name);
    n++;
  }
  closedir(d);
  if (n > 1)
    qsort(names, n, sizeof *names, cmp);
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    if (rc == 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
      if (run_file(names[i]) != 0)
        rc = -1;
      else
        ++*count;
    }
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char **argv)
{
  int count = 0;
  if (argc < 2) {
    fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  for (int i = 1; i < argc; i++)
    if (run_path(argv[i], &count) != 0)
      return 1;
  if (count == 0) {
    fprintf(stderr, "driver: no inputs found\n");
    return 1;
  }
  printf("%s: %d inputs ran\n", argv[0], count);
  return 0;
}
