/* SPDX-License-Identifier: MIT */
/* The filter language of the tracking toolset, implemented once
 * for every tool that selects runs or environments.
 *
 * A filter is a JSON array of conditions that must all hold:
 *  - attribute: {"attr": PATH, "op": OP, "value": V}, OP one of eq, ne, gt,
 *    gte, lt, lte, matches (RE2, unanchored), contains, contains_any,
 *    contains_all, in, not_in, exists ("value" optional, default true);
 *  - series: {"series": KEY, "function": F, "op": OP, "value": NUMBER,
 *    "scale"?: S, "labels"?: {k: v}} with F one of last, first, min, max,
 *    avg, count and OP a comparison (eq ... lte), or {"series": KEY,
 *    "op": "exists"} (no function);
 *  - {"any_of": [attribute or series conditions]}: at least one holds;
 *    groups do not nest.
 * A condition on a missing attribute or series fails, except exists with
 * value false. Comparisons need matching types: numbers with numbers,
 * strings with strings, booleans with eq/ne. A datetime value (the row
 * says which, as ISO 8601 UTC text) compares as an instant with an ISO
 * 8601 string in any spelling or a number of epoch milliseconds; a date
 * alone is its midnight (UTC), except that eq / ne / in / not_in with a
 * date alone mean that whole day; other strings never equal it.
 *
 * Parsing checks everything up front (unknown keys, operators, value
 * types, patterns) and names the offending condition by its index.
 * The evaluator reads values through callbacks, so the same filter runs
 * over store records, test rows or RL environments. */
#ifndef PMCP_FILTER_FILTER_H
#define PMCP_FILTER_FILTER_H

#include <stddef.h>

#include <cjson/cJSON.h>

typedef struct pmcp__filter pmcp__filter;

/* Most conditions in a filter, and in one any_of group. */
#define PMCP__FILTER_MAX 64

/* The row a filter is evaluated on. */
typedef struct pmcp__filter_row {
  /* The value at an attribute path (string, number, bool, or an array of
   * strings for sets such as tags), or NULL when the row has none. */
  const cJSON *(*attr)(void *ud, const char *path);
  /* A series summary: 0 with *out set; 1 when the row has no such series
   * (or it has no finite value); negative on error. @p function is NULL
   * for an existence test. @p scale and @p labels may be NULL. */
  int (*series)(void *ud, const char *key, const char *function, const char *scale,
                const cJSON *labels, double *out);
  void *ud;
  /* Whether the value at @p path is a datetime (ISO 8601 text that
   * compares as an instant); may be NULL: none is. */
  int (*is_time)(void *ud, const char *path);
} pmcp__filter_row;

/* Parses @p json (an array; NULL or empty: matches everything).
 * @return 0; PMCP_EINVAL with a message naming the problem in @p err;
 *         PMCP_ENOMEM. */
int pmcp__filter_parse(const cJSON *json, pmcp__filter **out, char *err, size_t errlen);
void pmcp__filter_free(pmcp__filter *f);
/* 1 when @p row satisfies the filter, 0 when not, negative when a series
 * callback failed. */
int pmcp__filter_match(const pmcp__filter *f, const pmcp__filter_row *row);
/* Number of top-level conditions. */
size_t pmcp__filter_count(const pmcp__filter *f);

/* A sort: {"attr": PATH, "direction": "asc"|"desc"} or {"series": KEY,
 * "function": F, "direction": ..., "scale"?, "labels"?}. Default
 * direction: desc for attributes, asc for series. */
typedef struct pmcp__sort {
  char *attr;
  char *series, *function, *scale;
  cJSON *labels;
  int desc;
} pmcp__sort;

/* @return 0; PMCP_EINVAL (message in @p err); PMCP_ENOMEM. */
int pmcp__sort_parse(const cJSON *json, pmcp__sort *out, char *err, size_t errlen);
void pmcp__sort_dispose(pmcp__sort *s);

/* A row's sort key. */
typedef struct pmcp__sort_key {
  int kind; /* 0 missing, 1 number, 2 string, 3 bool */
  double num;
  const char *str; /* borrowed from the row's value */
} pmcp__sort_key;

/* Reads @p row's key for @p s. @return 0, or a negative series error. */
int pmcp__sort_key_of(const pmcp__sort *s, const pmcp__filter_row *row, pmcp__sort_key *out);
/* Orders two keys for @p s: missing values last in either direction,
 * then numbers, then strings, then booleans. */
int pmcp__sort_cmp(const pmcp__sort *s, const pmcp__sort_key *a, const pmcp__sort_key *b);

/* Walks a nested attribute tree by a slash-separated path
 * ("config/optimizer/lr"). NULL when absent. */
const cJSON *pmcp__filter_walk(const cJSON *tree, const char *path);

#endif
