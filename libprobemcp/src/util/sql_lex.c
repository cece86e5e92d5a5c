/* SPDX-License-Identifier: MIT */
/* SQL blanks, comments and the first word of a statement (sql_lex.h). */
#include "util/sql_lex.h"

#include <ctype.h>
#include <string.h>

const char *pmcp__sql_skip_blank(const char *s, const char *end, int nested)
{
  while (s < end) {
    if (isspace((unsigned char)*s) || *s == ';') {
      s++;
    } else if (s + 1 < end && s[0] == '-' && s[1] == '-') {
      while (s < end && *s != '\n')
        s++;
    } else if (s + 1 < end && s[0] == '/' && s[1] == '*') {
      int depth = 1;
      s += 2;
      while (s < end && depth > 0) {
        if (s + 1 < end && s[0] == '*' && s[1] == '/') {
          depth--;
          s += 2;
        } else if (nested && s + 1 < end && s[0] == '/' && s[1] == '*') {
          depth++;
          s += 2;
        } else {
          s++;
        }
      }
    } else {
      break;
    }
  }
  return s;
}

/* The first words of SQL statements other than queries, PostgreSQL's and
 * SQLite's, sorted. */
static const char *const commands[] = {
    "abort",      "alter",    "analyze", "attach",   "begin",     "call",    "checkpoint",
    "close",      "cluster",  "comment", "commit",   "copy",      "create",  "deallocate",
    "declare",    "delete",   "detach",  "discard",  "do",        "drop",    "end",
    "execute",    "fetch",    "grant",   "import",   "insert",    "listen",  "load",
    "lock",       "merge",    "move",    "notify",   "pragma",    "prepare", "reassign",
    "refresh",    "reindex",  "release", "replace",  "reset",     "revoke",  "rollback",
    "savepoint",  "security", "set",     "show",     "start",     "truncate", "unlisten",
    "update",     "vacuum",
};

size_t pmcp__sql_command(const char *s, size_t len, const char **word)
{
  const char *end = s + len;
  for (;;) {
    s = pmcp__sql_skip_blank(s, end, 1);
    if (s < end && *s == '(')
      s++;
    else
      break;
  }
  size_t n = 0;
  while (s + n < end && (isalpha((unsigned char)s[n]) || s[n] == '_'))
    n++;
  if (n == 0 || n > 16 || (s + n < end && isalnum((unsigned char)s[n])))
    return 0;
  char w[17];
  for (size_t i = 0; i < n; i++)
    w[i] = (char)tolower((unsigned char)s[i]);
  w[n] = '\0';
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(w, commands[i]) == 0) {
      *word = s;
      return n;
    }
  return 0;
}
