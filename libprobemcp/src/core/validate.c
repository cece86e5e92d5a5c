/* SPDX-License-Identifier: MIT */
/* Validation before the handler runs: the mode, arguments the mode does not
 * read, unknown arguments, types, bounds, enums and required arguments.
 * Every message names the JSON pointer and what was expected. */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "core/validate.h"
#include "core/jdoc.h"
#include "util/buf.h"
#include "util/json.h"

int pmcp__is_integral(double d)
{
  return isfinite(d) && d == floor(d) && fabs(d) <= 9007199254740992.0;
}

int pmcp__pointer_append(pmcp_buf *b, const char *token)
{
  int rc = pmcp__buf_putc(b, '/');
  for (const char *p = token; *p && !rc; p++) {
    if (*p == '~')
      rc = pmcp__buf_puts(b, "~0");
    else if (*p == '/')
      rc = pmcp__buf_puts(b, "~1");
    else
      rc = pmcp__buf_putc(b, *p);
  }
  return rc;
}

typedef struct vctx {
  pmcp_buf *msg;
  int n;
  int rc; /* first allocation failure */
} vctx;

/* Starts one problem: "; " separator and the pointer. */
static void begin(vctx *v, const char *name, long index)
{
  if (v->rc)
    return;
  if (v->n++)
    v->rc = pmcp__buf_puts(v->msg, "; ");
  if (!v->rc)
    v->rc = pmcp__buf_puts(v->msg, "/arguments");
  if (!v->rc && name)
    v->rc = pmcp__pointer_append(v->msg, name);
  if (!v->rc && index >= 0)
    v->rc = pmcp__buf_printf(v->msg, "/%ld", index);
  if (!v->rc)
    v->rc = pmcp__buf_puts(v->msg, ": ");
}

static void say(vctx *v, const char *fmt, ...) PMCP_PRINTF(2, 3);
static void say(vctx *v, const char *fmt, ...)
{
  if (v->rc)
    return;
  va_list ap;
  va_start(ap, fmt);
  v->rc = pmcp__buf_vprintf(v->msg, fmt, ap);
  va_end(ap);
}

static void say_num(vctx *v, double d)
{
  if (!v->rc)
    v->rc = pmcp__buf_number(v->msg, d);
}

static const char *kind_of(const cJSON *x)
{
  if (cJSON_IsString(x))
    return "a string";
  if (cJSON_IsNumber(x))
    return pmcp__is_integral(x->valuedouble) ? "an integer" : "a number";
  if (cJSON_IsBool(x))
    return "a boolean";
  if (cJSON_IsNull(x))
    return "null";
  if (cJSON_IsArray(x))
    return "an array";
  return "an object";
}

/* ", got <value>" with long strings shortened at a character boundary. */
static void say_got(vctx *v, const cJSON *x)
{
  if (cJSON_IsString(x)) {
    const char *s = x->valuestring;
    size_t n = strlen(s), cut = n;
    if (n > 60) {
      cut = 60;
      while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
        cut--;
    }
    say(v, ", got ");
    if (!v->rc)
      v->rc = pmcp__buf_json_string(v->msg, s, cut);
    if (cut < n)
      say(v, "...");
  } else if (cJSON_IsNumber(x)) {
    say(v, ", got ");
    say_num(v, x->valuedouble);
  } else {
    say(v, ", got %s", kind_of(x));
  }
}

static void say_list(vctx *v, char *const *vals, size_t n)
{
  for (size_t i = 0; i < n; i++)
    say(v, "%s%s", i ? ", " : "", vals[i]);
}

static void say_bounds(vctx *v, const pmcp__arg *a, const char *unit)
{
  if (a->has_min && a->has_max) {
    say(v, " between ");
    say_num(v, a->min);
    say(v, " and ");
    say_num(v, a->max);
  } else if (a->has_min) {
    say(v, " of at least ");
    say_num(v, a->min);
  } else if (a->has_max) {
    say(v, " of at most ");
    say_num(v, a->max);
  }
  if (unit)
    say(v, " %s", unit);
}

static int out_of_bounds(const pmcp__arg *a, double x)
{
  return (a->has_min && x < a->min) || (a->has_max && x > a->max);
}

static int in_enum(const pmcp__arg *a, const char *s)
{
  if (!a->enum_values)
    return 1;
  for (size_t i = 0; i < a->n_enum; i++)
    if (strcmp(a->enum_values[i], s) == 0)
      return 1;
  return 0;
}

static void check_string(vctx *v, const pmcp__arg *a, const cJSON *x, long index)
{
  if (!in_enum(a, x->valuestring)) {
    begin(v, a->name, index);
    say(v, "expected one of: ");
    say_list(v, a->enum_values, a->n_enum);
    say_got(v, x);
    return;
  }
  if (a->type == PMCP_T_STRING &&
      out_of_bounds(a, (double)pmcp__utf8_count(x->valuestring, strlen(x->valuestring)))) {
    begin(v, a->name, index);
    say(v, "expected a string");
    say_bounds(v, a, "characters long");
    say_got(v, x);
  }
}

static void check_items(vctx *v, const pmcp__arg *a, const cJSON *x, int numbers)
{
  long i = 0;
  for (const cJSON *it = x->child; it; it = it->next, i++) {
    if (numbers ? !cJSON_IsNumber(it) : !cJSON_IsString(it)) {
      begin(v, a->name, i);
      say(v, "expected %s", numbers ? "a number" : "a string");
      say_got(v, it);
    } else if (!numbers) {
      check_string(v, a, it, i);
    }
  }
}

static void check_count(vctx *v, const pmcp__arg *a, size_t n)
{
  if (out_of_bounds(a, (double)n)) {
    begin(v, a->name, -1);
    say(v, "expected a list");
    say_bounds(v, a, "items");
    say(v, ", got %zu", n);
  }
}

static void check_value(vctx *v, const pmcp__arg *a, const cJSON *x)
{
  const char *want = NULL;
  switch (a->type) {
  case PMCP_T_STRING:
    if (!cJSON_IsString(x))
      want = "a string";
    else
      check_string(v, a, x, -1);
    break;
  case PMCP_T_INTEGER:
  case PMCP_T_NUMBER: {
    int integer = a->type == PMCP_T_INTEGER;
    if (!cJSON_IsNumber(x) || (integer && !pmcp__is_integral(x->valuedouble))) {
      want = integer ? "an integer" : "a number";
    } else if (out_of_bounds(a, x->valuedouble)) {
      begin(v, a->name, -1);
      say(v, "expected %s", integer ? "an integer" : "a number");
      say_bounds(v, a, NULL);
      say_got(v, x);
    }
    break;
  }
  case PMCP_T_BOOLEAN:
    if (!cJSON_IsBool(x))
      want = "a boolean (true or false)";
    break;
  case PMCP_T_OBJECT:
    if (!cJSON_IsObject(x))
      want = "an object";
    break;
  case PMCP_T_ARRAY:
    if (!cJSON_IsArray(x))
      want = "an array";
    else
      check_count(v, a, (size_t)cJSON_GetArraySize(x));
    break;
  case PMCP_T_STRING_ARRAY:
  case PMCP_T_NUMBER_ARRAY:
    if (!cJSON_IsArray(x)) {
      want = a->type == PMCP_T_STRING_ARRAY ? "an array of strings"
                                            : "an array of numbers";
    } else {
      check_count(v, a, (size_t)cJSON_GetArraySize(x));
      check_items(v, a, x, a->type == PMCP_T_NUMBER_ARRAY);
    }
    break;
  case PMCP_T_STRING_OR_STRING_ARRAY:
    if (cJSON_IsString(x)) {
      check_string(v, a, x, -1);
      check_count(v, a, 1);
    } else if (cJSON_IsArray(x)) {
      check_count(v, a, (size_t)cJSON_GetArraySize(x));
      check_items(v, a, x, 0);
    } else {
      want = "a string or an array of strings";
    }
    break;
  case PMCP_T_ANY:
    break;
  }
  if (want) {
    begin(v, a->name, -1);
    say(v, "expected %s", want);
    say_got(v, x);
  }
}

static void say_mode_names(vctx *v, const pmcp__tool *t)
{
  for (size_t i = 0; i < t->n_modes; i++)
    say(v, "%s%s", i ? ", " : "", t->modes[i].name);
}

/* "it is read by mode(s) a, b" for an argument the chosen mode lacks. */
static int other_modes(vctx *v, const pmcp__tool *t, const char *name, int speak)
{
  int n = 0;
  for (size_t i = 0; i < t->n_modes; i++) {
    const pmcp__mode *m = &t->modes[i];
    for (size_t k = 0; k < m->n_args; k++) {
      if (strcmp(m->args[k].name, name) != 0)
        continue;
      if (speak)
        say(v, "%s%s", n ? ", " : "", m->name);
      n++;
    }
  }
  return n;
}

static void say_accepted(vctx *v, const pmcp__tool *t, const pmcp__mode *m)
{
  size_t n = 0;
  if (t->n_modes) {
    say(v, "mode");
    n++;
  }
  for (size_t i = 0; i < t->n_common; i++, n++)
    say(v, "%s%s", n ? ", " : "", t->common[i].name);
  for (size_t i = 0; m && i < m->n_args; i++, n++)
    say(v, "%s%s", n ? ", " : "", m->args[i].name);
  if (n == 0)
    say(v, "none");
}

int pmcp__validate(const pmcp__tool *t, const cJSON *args, const pmcp__mode **mode,
                   pmcp_buf *msg)
{
  vctx v = {msg, 0, 0};
  const pmcp__mode *m = NULL;
  *mode = NULL;
  if (t->literal)
    return 0;
  if (t->n_modes) {
    const cJSON *mv = pmcp__jget(args, "mode");
    if (!mv) {
      if (t->default_mode >= 0) {
        m = &t->modes[t->default_mode];
      } else {
        begin(&v, "mode", -1);
        say(&v, "missing required argument 'mode'; one of: ");
        say_mode_names(&v, t);
      }
    } else if (!cJSON_IsString(mv)) {
      begin(&v, "mode", -1);
      say(&v, "expected a string, one of: ");
      say_mode_names(&v, t);
      say_got(&v, mv);
    } else {
      for (size_t i = 0; i < t->n_modes; i++)
        if (strcmp(t->modes[i].name, mv->valuestring) == 0)
          m = &t->modes[i];
      if (!m) {
        begin(&v, "mode", -1);
        say(&v, "unknown mode ");
        if (!v.rc)
          v.rc = pmcp__buf_json_string(msg, mv->valuestring, strlen(mv->valuestring));
        say(&v, "; the modes are: ");
        say_mode_names(&v, t);
      }
    }
    if (!m)
      return v.rc ? v.rc : PMCP_EINVAL;
  }

  for (const cJSON *x = args ? args->child : NULL; x; x = x->next) {
    const char *name = x->string;
    if (t->n_modes && strcmp(name, "mode") == 0)
      continue;
    for (const cJSON *y = args->child; y != x; y = y->next) {
      if (strcmp(y->string, name) == 0) {
        begin(&v, name, -1);
        say(&v, "argument '%s' is given more than once", name);
        break;
      }
    }
    const pmcp__arg *a = pmcp__tool_arg(t, m, name);
    if (a) {
      check_value(&v, a, x);
      continue;
    }
    begin(&v, name, -1);
    if (m && other_modes(&v, t, name, 0)) {
      say(&v, "argument '%s' is not read by mode '%s' (it is read by mode%s ", name,
          m->name, other_modes(&v, t, name, 0) > 1 ? "s" : "");
      other_modes(&v, t, name, 1);
      say(&v, "); mode '%s' takes: ", m->name);
      say_accepted(&v, t, m);
    } else {
      say(&v, "unknown argument '%s'; ", name);
      if ((t->flags & PMCP_TOOL_OFFSET_PAGED) && !strcmp(name, "cursor"))
        say(&v, "this tool pages by offset: pass a previous answer's next_offset as "
                "offset; ");
      if (m)
        say(&v, "mode '%s' takes: ", m->name);
      else
        say(&v, "this tool takes: ");
      say_accepted(&v, t, m);
    }
  }

  for (int pass = 0; pass < 2; pass++) {
    const pmcp__arg *list = pass ? (m ? m->args : NULL) : t->common;
    size_t n = pass ? (m ? m->n_args : 0) : t->n_common;
    for (size_t i = 0; i < n; i++) {
      if (!list[i].required || pmcp__jget(args, list[i].name))
        continue;
      begin(&v, list[i].name, -1);
      say(&v, "missing required argument '%s'", list[i].name);
      if (pass)
        say(&v, " (mode '%s')", m->name);
    }
  }
  if (v.rc)
    return v.rc;
  if (v.n)
    return PMCP_EINVAL;
  *mode = m;
  return 0;
}
