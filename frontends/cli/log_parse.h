/* SPDX-License-Identifier: MIT */
/* The line format of `probe log` (one JSON object a line, see probe(1)),
 * parsed without building a document: the members the format knows are
 * read straight into a log_line, any other member is checked as JSON and
 * skipped. Strings are decoded in place (the line is modified) and stay
 * valid as long as the line does. A line that is not valid JSON is
 * refused naming the byte and what was expected there. */
#ifndef PROBE_LOG_PARSE_H
#define PROBE_LOG_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* The JSON type of a member (LJ_ABSENT: not in the line). */
typedef enum { LJ_ABSENT, LJ_NULL, LJ_BOOL, LJ_NUMBER, LJ_STRING, LJ_ARRAY, LJ_OBJECT } lj_type;

/* One member of `labels` or `values`: its name, type and value. */
typedef struct log_kv {
  const char *name;
  lj_type type;
  const char *str; /* LJ_STRING */
  double num;      /* LJ_NUMBER */
} log_kv;

/* A number array member (edges, counts, x, y). */
typedef struct log_arr {
  lj_type type;
  int all_numbers; /* every element is a number */
  double *v;       /* owned by the parser */
  size_t n, cap;
} log_arr;

enum { LA_EDGES, LA_COUNTS, LA_X, LA_Y, LA_N };

/* A parsed line: the first occurrence of each known member. */
typedef struct log_line {
  /* the template the line matched (or was made one), -1 none; tmpl_new:
   * made from this line (its shape was not seen) */
  int tmpl, tmpl_new;
  lj_type step_t, time_t, value_t, key_t, kind_t, scale_t, labels_t, values_t;
  double step, time_num, value;
  const char *time_str, *value_str, *key, *kind, *scale;
  log_kv *labels, *values; /* owned by the parser */
  size_t n_labels, n_values, cap_labels, cap_values;
  log_arr arr[LA_N];
} log_line;

/* Where the numbers of a line were, with the bytes around them: the
 * next line that repeats those bytes exactly, with numbers (JSON grammar)
 * in the same places, is the same object with other numbers, so it is
 * read by comparing bytes and converting its numbers. Lines with number
 * arrays are always parsed. */
typedef struct log_hole {
  size_t at, end; /* in the raw line */
  size_t dst;     /* 0 step, 1 time, 2 value, 3 + i values[i] */
} log_hole;

typedef struct log_tmpl1 {
  char *raw, *dec; /* the line as read; decoded (the strings of its line) */
  size_t len, cap;
  log_hole *h;
  size_t n, cap_h;
  int valid;
  /* its line's members (strings into dec), restored on a hit */
  log_line *saved;
} log_tmpl1;

/* The templates of recent lines (several, so lines that cycle through a
 * few shapes, e.g. one per rank, all hit). */
#define LOG_TMPLS 8
typedef struct log_tmpl {
  log_tmpl1 t[LOG_TMPLS];
  int last, victim, used;
} log_tmpl;

/* Parses @p line (@p len bytes, modified in place; no NUL needed) into
 * @p out, whose arrays are reused from line to line, and whose strings
 * stay valid until the next call. @p t (zeroed before the first line) is
 * the last line's template. Returns 0; -1 when the line is not valid JSON
 * (@p why: where and what); -2 when it is JSON but not an object; -3 out
 * of memory. */
int probe_log_parse(char *line, size_t len, log_line *out, log_tmpl *t, char *why,
                    size_t whyn);

/* Frees the arrays of @p l and @p t. */
void probe_log_line_free(log_line *l, log_tmpl *t);

#endif
