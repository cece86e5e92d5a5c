/* SPDX-License-Identifier: MIT */
/* probe set REF ...: configuration, attributes and tags of a run,
 * experiment or project, typed (string, int, float, bool, datetime, string
 * set), all in one transaction. */
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"

static void set_usage(FILE *f)
{
  fprintf(f,
    "usage: probe set REF [PATH=VALUE]... [--config K=V]... [--string PATH=V]...\n"
    "                 [--datetime PATH=TIME]... [--set PATH=A,B,...]... [--unset PATH]...\n"
    "                 [--tag TAG]... [--untag TAG]...\n\n"
    "REF is run:ID (or a bare run id), experiment:ID or project:ID. PATH is\n"
    "slash-separated (config/optimizer/lr). PATH=VALUE guesses the type: integer,\n"
    "float, true/false, else string; --string keeps text as text; --config K=V is\n"
    "PATH=VALUE under config/. --datetime takes ISO 8601 (UTC) or epoch ms; --set a\n"
    "comma-separated string set. Experiment config is inherited by its runs.\n");
}

/* Guesses the type of @p text. */
static void guess(const char *text, pmcp_value *v)
{
  int64_t i;
  double d;
  memset(v, 0, sizeof *v);
  if (probe_cli_int(text, &i) == 0) {
    v->type = PMCP_V_INT;
    v->i = i;
  } else if (probe_cli_double(text, &d) == 0) {
    v->type = PMCP_V_FLOAT;
    v->f = d;
  } else if (strcmp(text, "true") == 0 || strcmp(text, "false") == 0) {
    v->type = PMCP_V_BOOL;
    v->i = text[0] == 't';
  } else {
    v->type = PMCP_V_STRING;
    v->s = text;
  }
}

int probe_cmd_set(const probe_globals *g, int argc, char **argv)
{
  if (argc < 2 || probe_cli_is_help(argv[1])) {
    set_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  char ref[300];
  snprintf(ref, sizeof ref, "%s%s", strchr(argv[1], ':') ? "" : "run:", argv[1]);
  if (argc < 3)
    return probe_cli_err(2, "set", "nothing to set ('probe set --help')");
  pmcp_store *s;
  pmcp_tenant t;
  if (probe_cli_open(g, 0, &s, &t))
    return 1;
  int rc = pmcp_store_begin(s), usage = 0, n = 0;
  for (int i = 2; i < argc && rc == 0 && !usage; i++) {
    const char *v = NULL, *opt = "";
    int m = 0;
    char kind = 'g';
    if ((m = probe_cli_opt(argc, argv, &i, "--config", &v, "set")) > 0)
      kind = 'c';
    else if (!m && (m = probe_cli_opt(argc, argv, &i, "--string", &v, "set")) > 0)
      kind = 's';
    else if (!m && (m = probe_cli_opt(argc, argv, &i, "--datetime", &v, "set")) > 0)
      kind = 'd';
    else if (!m && (m = probe_cli_opt(argc, argv, &i, "--set", &v, "set")) > 0)
      kind = 'S';
    else if (!m && (m = probe_cli_opt(argc, argv, &i, "--unset", &v, "set")) > 0)
      kind = 'u';
    else if (!m && (m = probe_cli_opt(argc, argv, &i, "--tag", &v, "set")) > 0)
      kind = 't';
    else if (!m && (m = probe_cli_opt(argc, argv, &i, "--untag", &v, "set")) > 0)
      kind = 'T';
    if (m < 0) {
      usage = 1;
      break;
    }
    if (m == 0) {
      if (argv[i][0] == '-') {
        probe_cli_err(2, "set", "unknown option '%s'", argv[i]);
        usage = 1;
        break;
      }
      v = argv[i];
    }
    (void)opt;
    n++;
    if (kind == 't' || kind == 'T') {
      rc = pmcp_store_tag(s, t, ref, v, kind == 't');
      continue;
    }
    if (kind == 'u') {
      rc = pmcp_store_unset_attr(s, t, ref, v);
      continue;
    }
    const char *eq = strchr(v, '=');
    if (!eq || eq == v) {
      probe_cli_err(2, "set", "'%s' is not PATH=VALUE", v);
      usage = 1;
      break;
    }
    char path[300];
    snprintf(path, sizeof path, "%s%.*s", kind == 'c' ? "config/" : "", (int)(eq - v), v);
    const char *text = eq + 1;
    pmcp_value val;
    memset(&val, 0, sizeof val);
    char **items = NULL;
    char *copy = NULL;
    if (kind == 's') {
      val.type = PMCP_V_STRING;
      val.s = text;
    } else if (kind == 'd') {
      val.type = PMCP_V_DATETIME;
      if (probe_cli_time(text, &val.i)) {
        probe_cli_err(2, "set", "'%s' is not a time (ISO 8601 or epoch ms)", text);
        usage = 1;
        break;
      }
    } else if (kind == 'S') {
      copy = strdup(text);
      size_t cnt = 0, cap = 8;
      items = malloc(cap * sizeof *items);
      for (char *tok = strtok(copy, ","); tok && items; tok = strtok(NULL, ",")) {
        if (cnt == cap) {
          cap *= 2;
          char **ni = realloc(items, cap * sizeof *items);
          if (!ni)
            break;
          items = ni;
        }
        items[cnt++] = tok;
      }
      val.type = PMCP_V_STRING_SET;
      val.set = (const char *const *)items;
      val.n_set = cnt;
    } else {
      guess(text, &val);
    }
    rc = pmcp_store_set_attr(s, t, ref, path, &val);
    free(items);
    free(copy);
  }
  if (usage) {
    pmcp_store_rollback(s);
    pmcp_store_free(s);
    return 2;
  }
  if (rc == 0)
    rc = pmcp_store_commit(s);
  if (rc) {
    probe_cli_fail("set", s, rc);
    pmcp_store_rollback(s);
  }
  pmcp_store_free(s);
  return rc ? 1 : 0;
}
