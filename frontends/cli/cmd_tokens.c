/* SPDX-License-Identifier: MIT */
/* probe tokens: count or encode text with the built-in o200k_base tokenizer
 * (tokens.h), exactly as tiktoken's encode_ordinary.
 *
 *   probe tokens count [FILE]            the bare count of FILE or stdin
 *   probe tokens encode [FILE]           one JSON array of the ids
 *   probe tokens encode --jsonl [FILE]   {"text": ...} per line -> [ids] per line
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "probemcp/probemcp.h"

static void tokens_usage(FILE *f)
{
  fprintf(f,
          "usage: probe tokens count [FILE]\n"
          "       probe tokens encode [--jsonl] [FILE]\n\n"
          "Counts or encodes UTF-8 text with o200k_base, exactly as tiktoken's\n"
          "encode_ordinary (special tokens such as <|endoftext|> are ordinary text).\n"
          "FILE defaults to stdin ('-' also means stdin).\n\n"
          "  count           print the number of tokens of the whole input\n"
          "  encode          print the ids of the whole input as one JSON array\n"
          "  encode --jsonl  read one JSON object per line with a string member\n"
          "                  \"text\" (other members are ignored) and print one JSON\n"
          "                  array of ids per line\n\n"
          "Input that is not valid UTF-8 is an error naming the byte offset.\n");
}

/* Reads all of @p path ("-" or NULL: stdin). */
static int read_all(const char *path, char **out, size_t *len)
{
  FILE *f = stdin;
  if (path && strcmp(path, "-") != 0) {
    f = fopen(path, "rb");
    if (!f) {
      fprintf(stderr, "probe tokens: cannot open '%s': %s\n", path, strerror(errno));
      return -1;
    }
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  int rc = 0;
  for (;;) {
    if (!buf) {
      fprintf(stderr, "probe tokens: out of memory\n");
      rc = -1;
      break;
    }
    if (n == cap) {
      char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        buf = NULL;
        continue;
      }
      buf = nb;
      cap *= 2;
    }
    size_t r = fread(buf + n, 1, cap - n, f);
    n += r;
    if (r == 0) {
      if (ferror(f)) {
        fprintf(stderr, "probe tokens: read error on '%s'\n", path ? path : "-");
        rc = -1;
      }
      break;
    }
  }
  if (f != stdin)
    fclose(f);
  if (rc < 0) {
    free(buf);
    return -1;
  }
  *out = buf;
  *len = n;
  return 0;
}

static void report(const char *what, const char *text, size_t len, int rc)
{
  size_t off = 0;
  if (rc == PMCP_EUTF8 && pmcp_tokens_utf8_check(text, len, &off) == PMCP_EUTF8)
    fprintf(stderr, "probe tokens: %s: invalid UTF-8 at byte %zu\n", what, off);
  else
    fprintf(stderr, "probe tokens: %s: %s\n", what, pmcp_strerror(rc));
}

static int write_ids(FILE *f, const uint32_t *ids, size_t n)
{
  char tmp[16];
  fputc('[', f);
  for (size_t i = 0; i < n; i++) {
    int k = snprintf(tmp, sizeof tmp, i ? ",%u" : "%u", (unsigned)ids[i]);
    fwrite(tmp, 1, (size_t)k, f);
  }
  fputc(']', f);
  return fputc('\n', f) == EOF ? -1 : 0;
}

/* ---- a minimal JSON reader for {"text": "..."} lines -------------------
 * cJSON keeps strings NUL-terminated, which would cut a "\u0000" inside the
 * text; this reader keeps the exact bytes and their length. */

typedef struct jr {
  const char *p, *e;
  const char *err;
} jr;

static void ws(jr *r)
{
  while (r->p < r->e && (*r->p == ' ' || *r->p == '\t' || *r->p == '\r' || *r->p == '\n'))
    r->p++;
}

static int hex4(jr *r, unsigned *out)
{
  if (r->e - r->p < 4)
    return -1;
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    char c = r->p[i];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
    else return -1;
  }
  r->p += 4;
  *out = v;
  return 0;
}

static void put_utf8(pmcp_buf *b, unsigned cp, int *oom)
{
  char u[4];
  size_t n;
  if (cp < 0x80) { u[0] = (char)cp; n = 1; }
  else if (cp < 0x800) { u[0] = (char)(0xC0 | cp >> 6); u[1] = (char)(0x80 | (cp & 0x3F)); n = 2; }
  else if (cp < 0x10000) { u[0] = (char)(0xE0 | cp >> 12); u[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); u[2] = (char)(0x80 | (cp & 0x3F)); n = 3; }
  else { u[0] = (char)(0xF0 | cp >> 18); u[1] = (char)(0x80 | ((cp >> 12) & 0x3F)); u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); u[3] = (char)(0x80 | (cp & 0x3F)); n = 4; }
  size_t need = b->len + n + 1;
  if (need > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 256;
    while (cap < need)
      cap *= 2;
    char *np = realloc(b->ptr, cap);
    if (!np) { *oom = 1; return; }
    b->ptr = np;
    b->cap = cap;
  }
  memcpy(b->ptr + b->len, u, n);
  b->len += n;
  b->ptr[b->len] = '\0';
}

/* Parses a JSON string at r->p; with @p out non-NULL stores its bytes. */
static int jstring(jr *r, pmcp_buf *out)
{
  int oom = 0;
  if (r->p >= r->e || *r->p != '"') { r->err = "expected a string"; return -1; }
  r->p++;
  if (out) out->len = 0;
  while (r->p < r->e && *r->p != '"') {
    unsigned char c = (unsigned char)*r->p++;
    unsigned cp;
    if (c < 0x20) { r->err = "control character in a string"; return -1; }
    if (c != '\\') {
      if (out) {
        /* raw bytes are copied as they are; UTF-8 is checked when counting */
        size_t need = out->len + 2;
        if (need > out->cap) {
          size_t cap = out->cap ? out->cap * 2 : 256;
          char *np = realloc(out->ptr, cap);
          if (!np) { r->err = "out of memory"; return -1; }
          out->ptr = np;
          out->cap = cap;
        }
        out->ptr[out->len++] = (char)c;
        out->ptr[out->len] = '\0';
      }
      continue;
    }
    if (r->p >= r->e) break;
    c = (unsigned char)*r->p++;
    switch (c) {
    case '"': cp = '"'; break;
    case '\\': cp = '\\'; break;
    case '/': cp = '/'; break;
    case 'b': cp = '\b'; break;
    case 'f': cp = '\f'; break;
    case 'n': cp = '\n'; break;
    case 'r': cp = '\r'; break;
    case 't': cp = '\t'; break;
    case 'u':
      if (hex4(r, &cp) < 0) { r->err = "bad \\u escape"; return -1; }
      if (cp >= 0xDC00 && cp <= 0xDFFF) { r->err = "lone low surrogate escape (not UTF-8 text)"; return -1; }
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        unsigned lo;
        if (r->e - r->p < 2 || r->p[0] != '\\' || r->p[1] != 'u') { r->err = "lone high surrogate escape (not UTF-8 text)"; return -1; }
        r->p += 2;
        if (hex4(r, &lo) < 0 || lo < 0xDC00 || lo > 0xDFFF) { r->err = "high surrogate escape without its low half"; return -1; }
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      }
      break;
    default:
      r->err = "bad escape in a string";
      return -1;
    }
    if (out)
      put_utf8(out, cp, &oom);
    if (oom) { r->err = "out of memory"; return -1; }
  }
  if (r->p >= r->e) { r->err = "unterminated string"; return -1; }
  r->p++;
  return 0;
}

static int jskip(jr *r, int depth)
{
  if (depth > 512) { r->err = "nesting too deep"; return -1; }
  ws(r);
  if (r->p >= r->e) { r->err = "expected a value"; return -1; }
  char c = *r->p;
  if (c == '"')
    return jstring(r, NULL);
  if (c == '{' || c == '[') {
    char close = c == '{' ? '}' : ']';
    r->p++;
    ws(r);
    if (r->p < r->e && *r->p == close) { r->p++; return 0; }
    for (;;) {
      if (c == '{') {
        ws(r);
        if (jstring(r, NULL) < 0) return -1;
        ws(r);
        if (r->p >= r->e || *r->p != ':') { r->err = "expected ':'"; return -1; }
        r->p++;
      }
      if (jskip(r, depth + 1) < 0) return -1;
      ws(r);
      if (r->p < r->e && *r->p == ',') { r->p++; continue; }
      if (r->p < r->e && *r->p == close) { r->p++; return 0; }
      r->err = "expected ',' or a closing bracket";
      return -1;
    }
  }
  /* number or literal: a JSON scalar token */
  const char *s = r->p;
  while (r->p < r->e && (strchr("+-.0123456789eE", *r->p) || (*r->p >= 'a' && *r->p <= 'z')))
    r->p++;
  size_t n = (size_t)(r->p - s);
  if (n == 0) { r->err = "unexpected character"; return -1; }
  if ((n == 4 && memcmp(s, "true", 4) == 0) || (n == 5 && memcmp(s, "false", 5) == 0) ||
      (n == 4 && memcmp(s, "null", 4) == 0))
    return 0;
  if (!(*s == '-' || (*s >= '0' && *s <= '9'))) { r->err = "unexpected literal"; return -1; }
  return 0;
}

/* Parses one line: an object whose "text" member is a string. */
static int parse_line(const char *line, size_t len, pmcp_buf *text, const char **err)
{
  jr r = {line, line + len, NULL};
  int have = 0;
  ws(&r);
  if (r.p >= r.e || *r.p != '{') { *err = "not a JSON object"; return -1; }
  r.p++;
  ws(&r);
  if (r.p < r.e && *r.p == '}') {
    r.p++;
  } else {
    for (;;) {
      ws(&r);
      const char *k = r.p;
      if (jstring(&r, NULL) < 0) goto bad;
      int is_text = (size_t)(r.p - k) == 6 && memcmp(k, "\"text\"", 6) == 0;
      ws(&r);
      if (r.p >= r.e || *r.p != ':') { r.err = "expected ':'"; goto bad; }
      r.p++;
      ws(&r);
      if (is_text) {
        if (r.p >= r.e || *r.p != '"') { r.err = "\"text\" is not a string"; goto bad; }
        if (jstring(&r, text) < 0) goto bad;
        have = 1;
      } else if (jskip(&r, 1) < 0) {
        goto bad;
      }
      ws(&r);
      if (r.p < r.e && *r.p == ',') { r.p++; continue; }
      if (r.p < r.e && *r.p == '}') { r.p++; break; }
      r.err = "expected ',' or '}'";
      goto bad;
    }
  }
  ws(&r);
  if (r.p != r.e) { *err = "trailing characters after the object"; return -1; }
  if (!have) { *err = "no \"text\" string member"; return -1; }
  return 0;
bad:
  *err = r.err ? r.err : "malformed JSON";
  return -1;
}

static int cmd_encode_jsonl(const char *path)
{
  char *in;
  size_t len;
  if (read_all(path, &in, &len) < 0)
    return 1;
  pmcp_buf text = PMCP_BUF_INIT;
  int status = 0;
  size_t lineno = 0;
  const char *p = in, *e = in + len;
  while (p < e) {
    const char *nl = memchr(p, '\n', (size_t)(e - p));
    const char *le = nl ? nl : e;
    lineno++;
    const char *s = p;
    p = nl ? nl + 1 : e;
    size_t ll = (size_t)(le - s);
    if (ll && s[ll - 1] == '\r')
      ll--;
    int blank = 1;
    for (size_t i = 0; i < ll; i++)
      if (!(s[i] == ' ' || s[i] == '\t'))
        blank = 0;
    if (blank)
      continue;
    const char *err = NULL;
    if (parse_line(s, ll, &text, &err) < 0) {
      fprintf(stderr, "probe tokens encode: line %zu: %s\n", lineno, err);
      status = 1;
      break;
    }
    uint32_t *ids;
    size_t n;
    int rc = pmcp_tokens_encode(text.ptr ? text.ptr : "", text.len, &ids, &n);
    if (rc < 0) {
      char what[64];
      snprintf(what, sizeof what, "line %zu: \"text\"", lineno);
      report(what, text.ptr, text.len, rc);
      status = 1;
      break;
    }
    int w = write_ids(stdout, ids, n);
    pmcp_tokens_free(ids);
    if (w < 0) {
      fprintf(stderr, "probe tokens encode: write error\n");
      status = 1;
      break;
    }
  }
  pmcp_buf_dispose(&text);
  free(in);
  if (fflush(stdout) != 0) {
    fprintf(stderr, "probe tokens encode: write error\n");
    status = 1;
  }
  return status;
}

static int cmd_count_or_encode(const char *path, int encode)
{
  char *in;
  size_t len;
  if (read_all(path, &in, &len) < 0)
    return 1;
  int rc, status = 0;
  const char *what = path && strcmp(path, "-") != 0 ? path : "stdin";
  if (encode) {
    uint32_t *ids;
    size_t n;
    rc = pmcp_tokens_encode(in, len, &ids, &n);
    if (rc == 0) {
      write_ids(stdout, ids, n);
      pmcp_tokens_free(ids);
    }
  } else {
    size_t n;
    rc = pmcp_tokens_count(in, len, &n);
    if (rc == 0)
      printf("%zu\n", n);
  }
  if (rc < 0) {
    report(what, in, len, rc);
    status = 1;
  }
  free(in);
  if (fflush(stdout) != 0) {
    fprintf(stderr, "probe tokens: write error\n");
    status = 1;
  }
  return status;
}

int probe_cmd_tokens(const probe_globals *g, int argc, char **argv)
{
  (void)g;
  if (argc < 2) {
    tokens_usage(stderr);
    return 2;
  }
  const char *sub = argv[1];
  if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
    tokens_usage(stdout);
    return 0;
  }
  int is_count = strcmp(sub, "count") == 0, is_encode = strcmp(sub, "encode") == 0;
  if (!is_count && !is_encode) {
    fprintf(stderr, "probe tokens: unknown subcommand '%s' (count, encode)\n", sub);
    return 2;
  }
  int jsonl = 0, dashdash = 0;
  const char *path = NULL;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (!dashdash && (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)) {
      tokens_usage(stdout);
      return 0;
    } else if (!dashdash && strcmp(a, "--") == 0) {
      dashdash = 1;
    } else if (!dashdash && is_encode && strcmp(a, "--jsonl") == 0) {
      jsonl = 1;
    } else if (!dashdash && a[0] == '-' && a[1] != '\0') {
      fprintf(stderr, "probe tokens %s: unknown option '%s'\n", sub, a);
      return 2;
    } else if (path) {
      fprintf(stderr, "probe tokens %s: one FILE at most ('%s' and '%s')\n", sub, path, a);
      return 2;
    } else {
      path = a;
    }
  }
  if (jsonl)
    return cmd_encode_jsonl(path);
  return cmd_count_or_encode(path, is_encode);
}
