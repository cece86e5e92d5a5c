/* SPDX-License-Identifier: MIT */
/* `probe papers import FILE`: arXiv metadata as JSON lines (the Kaggle /
 * OAI snapshot schema: id, title, abstract, authors, authors_parsed,
 * categories, versions[{version, created}], update_date, doi,
 * journal-ref, comments, license). Read a line at a time, so the full
 * multi-gigabyte snapshot streams through. Papers are keyed by arXiv id;
 * the sink skips ids it already holds. */
#include "import/import.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "import/pyjson.h"
#include "probemcp/error.h"
#include "util/buf.h"

static const char *str_field(const cJSON *o, const char *name)
{
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, name);
  return cJSON_IsString(j) && j->valuestring ? j->valuestring : NULL;
}

/* "Sat, 31 Mar 2007 02:26:18 GMT" -> "2007-03-31T02:26:18Z". 0 or -1. */
int pmcp__arxiv_date(const char *s, char out[80])
{
  static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
  const char *p = strchr(s, ',');
  p = p ? p + 1 : s;
  int day, y, hh, mm, ss;
  char mon[4];
  if (sscanf(p, " %2d %3s %4d %2d:%2d:%2d", &day, mon, &y, &hh, &mm, &ss) !=
      6)
    return -1;
  const char *m = strstr(months, mon);
  if (!m || strlen(mon) != 3 || (m - months) % 3 != 0)
    return -1;
  int mo = (int)(m - months) / 3 + 1;
  if (day < 1 || day > 31 || y < 1900 || y > 9999 || hh > 23 || mm > 59 ||
      ss > 60 || hh < 0 || mm < 0 || ss < 0)
    return -1;
  snprintf(out, 80, "%04d-%02d-%02dT%02d:%02d:%02dZ", y, mo, day, hh, mm, ss);
  return 0;
}

static int one(pmcp__imp_ctx *cx, const char *path, int line, const char *s,
               size_t len)
{
  cJSON *o = pmcp__hf_parse(cx, path, line, s, len);
  if (!o)
    return PMCP_ECORRUPT;
  int rc = 0;
  const char **alist = NULL;
  pmcp_buf names = PMCP_BUF_INIT;
  size_t *offs = NULL;
  if (!cJSON_IsObject(o)) {
    rc = pmcp__imp_fail(cx, PMCP_ECORRUPT, "%s: line %d: not a JSON object",
                        path, line);
    goto out;
  }
  pmcp__imp_paper p;
  memset(&p, 0, sizeof p);
  p.id = str_field(o, "id");
  p.title = str_field(o, "title");
  if (!p.id || !*p.id || !p.title) {
    rc = pmcp__imp_fail(cx, PMCP_ECORRUPT,
                        "%s: line %d: a record needs string \"id\" and "
                        "\"title\"",
                        path, line);
    goto out;
  }
  for (const char *c = p.id; *c; c++)
    if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') ||
          (*c >= 'A' && *c <= 'Z') || *c == '.' || *c == '-' || *c == '/' ||
          *c == '_')) {
      rc = pmcp__imp_fail(cx, PMCP_ECORRUPT,
                          "%s: line %d: \"id\" is not an arXiv id", path,
                          line);
      goto out;
    }
  p.abstract = str_field(o, "abstract");
  p.authors = str_field(o, "authors");
  p.categories = str_field(o, "categories");
  p.doi = str_field(o, "doi");
  p.journal_ref = str_field(o, "journal-ref");
  p.comments = str_field(o, "comments");
  p.license = str_field(o, "license");

  const cJSON *ap = cJSON_GetObjectItemCaseSensitive(o, "authors_parsed");
  size_t na = cJSON_IsArray(ap) ? (size_t)cJSON_GetArraySize(ap) : 0;
  if (na) {
    alist = calloc(na, sizeof *alist);
    offs = calloc(na, sizeof *offs);
    if (!alist || !offs)
      goto oom;
    const cJSON *a;
    size_t k = 0;
    cJSON_ArrayForEach(a, ap)
    {
      /* [last, first, suffix] -> "first last suffix" */
      const char *parts[3] = {NULL, NULL, NULL};
      const cJSON *x;
      int i = 0;
      cJSON_ArrayForEach(x, a)
      {
        if (i < 3 && cJSON_IsString(x))
          parts[i] = x->valuestring;
        i++;
      }
      offs[k] = names.len;
      int first = 1;
      const int order[3] = {1, 0, 2};
      for (int q = 0; q < 3; q++) {
        const char *t = parts[order[q]];
        if (!t || !*t)
          continue;
        if ((!first && pmcp__buf_putc(&names, ' ')) ||
            pmcp__buf_puts(&names, t))
          goto oom;
        first = 0;
      }
      if (pmcp__buf_putc(&names, '\0'))
        goto oom;
      k++;
    }
    for (size_t i = 0; i < k; i++)
      alist[i] = names.ptr + offs[i];
    p.author_list = alist;
    p.n_authors = k;
  }

  char pub[80], upd[80];
  const cJSON *vs = cJSON_GetObjectItemCaseSensitive(o, "versions");
  int nv = cJSON_IsArray(vs) ? cJSON_GetArraySize(vs) : 0;
  if (nv > 0) {
    const char *c0 =
        str_field(cJSON_GetArrayItem(vs, 0), "created");
    const char *cn = str_field(cJSON_GetArrayItem(vs, nv - 1), "created");
    if ((c0 && pmcp__arxiv_date(c0, pub) != 0) ||
        (cn && pmcp__arxiv_date(cn, upd) != 0)) {
      rc = pmcp__imp_fail(cx, PMCP_ECORRUPT,
                          "%s: line %d: unreadable version date", path, line);
      goto out;
    }
    p.published = c0 ? pub : NULL;
    p.updated = cn ? upd : NULL;
  }
  const char *ud = str_field(o, "update_date");
  if (!p.updated && ud)
    p.updated = ud;
  rc = pmcp__imp_add_paper(cx, &p);
  goto out;
oom:
  rc = pmcp__imp_fail(cx, PMCP_ENOMEM, "out of memory");
out:
  free(alist);
  free(offs);
  pmcp_buf_dispose(&names);
  cJSON_Delete(o);
  return rc;
}

int pmcp__import_arxiv(pmcp__imp_ctx *cx, const char *path)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return pmcp__imp_fail(cx, PMCP_EIO, "%s: cannot open: %s", path,
                          strerror(errno));
  cx->n.files++;
  struct stat st;
  uint64_t total = fstat(fileno(f), &st) == 0 ? (uint64_t)st.st_size : 0;
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  int no = 0, rc = 0;
  uint64_t done = 0, records = 0;
  while ((n = getline(&line, &cap, f)) >= 0) {
    no++;
    done += (uint64_t)n;
    size_t len = (size_t)n;
    if (memchr(line, '\0', len)) {
      rc = pmcp__imp_fail(cx, PMCP_ECORRUPT, "%s: line %d: NUL byte", path,
                          no);
      break;
    }
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r' ||
                   line[len - 1] == ' ' || line[len - 1] == '\t'))
      len--;
    if (len == 0)
      continue;
    if ((rc = one(cx, path, no, line, len)))
      break;
    if (++records % 256 == 0)
      pmcp__imp_progress(cx, "papers", done, total);
  }
  if (rc == 0 && ferror(f))
    rc = pmcp__imp_fail(cx, PMCP_EIO, "%s: read error", path);
  if (rc == 0 && records == 0)
    rc = pmcp__imp_fail(cx, PMCP_ECORRUPT, "%s: no records", path);
  if (rc == 0)
    pmcp__imp_progress(cx, "papers", total, total);
  free(line);
  fclose(f);
  return rc;
}
