/* SPDX-License-Identifier: MIT */
/* probe note REF TEXT: notes, overview pages (with the person-written
 * summary block), hand-offs, sub-notes and the team note; writing to an
 * existing note (--id, or an overview / the team note) adds a version. */
#include <string.h>

#include "cli_util.h"

static void note_usage(FILE *f)
{
  fprintf(f,
    "usage: probe note REF [TEXT|@FILE|-] [--kind note|overview|handoff|sub-note]\n"
    "                  [--title T] [--summary TEXT|@FILE] [--status S] [--parent NOTE]\n"
    "                  [--author WHO] [--via WHAT] [--time TIME]\n"
    "       probe note --team [TEXT|@FILE|-] [--author WHO]\n"
    "       probe note --id NOTE [TEXT|@FILE|-] ...      (a new version of NOTE)\n\n"
    "REF is the run:, experiment: or project: the note is about. An overview page\n"
    "(one per project or experiment) and the team note get a new version each\n"
    "time they are written; --summary is the block a person wrote on the page.\n"
    "Without TEXT the body is read from stdin. Prints the note's ref and version.\n");
}

int probe_cmd_note(const probe_globals *g, int argc, char **argv)
{
  pmcp_note_spec n = PMCP_NOTE_SPEC_INIT;
  const char *text = NULL, *summary = NULL, *when = NULL;
  int team = 0;
  for (int i = 1; i < argc; i++) {
    int m;
    if (probe_cli_is_help(argv[i])) {
      note_usage(stdout);
      return 0;
    }
    if ((m = probe_cli_opt(argc, argv, &i, "--kind", &n.kind, "note")) ||
        (m = probe_cli_opt(argc, argv, &i, "--title", &n.title, "note")) ||
        (m = probe_cli_opt(argc, argv, &i, "--summary", &summary, "note")) ||
        (m = probe_cli_opt(argc, argv, &i, "--status", &n.status, "note")) ||
        (m = probe_cli_opt(argc, argv, &i, "--parent", &n.parent, "note")) ||
        (m = probe_cli_opt(argc, argv, &i, "--author", &n.author, "note")) ||
        (m = probe_cli_opt(argc, argv, &i, "--via", &n.via, "note")) ||
        (m = probe_cli_opt(argc, argv, &i, "--id", &n.id, "note")) ||
        (m = probe_cli_opt(argc, argv, &i, "--time", &when, "note"))) {
      if (m < 0)
        return 2;
    } else if (strcmp(argv[i], "--team") == 0) {
      team = 1;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return probe_cli_err(2, "note", "unknown option '%s' ('probe note --help')", argv[i]);
    } else if (!n.on && !team && !n.id) {
      n.on = argv[i];
    } else if (!text) {
      text = argv[i];
    } else {
      return probe_cli_err(2, "note", "unexpected argument '%s' (quote the text)", argv[i]);
    }
  }
  if (team)
    n.kind = "team";
  if (!n.on && !team && !n.id) {
    note_usage(stderr);
    return 2;
  }
  if (n.on && !strchr(n.on, ':'))
    return probe_cli_err(2, "note", "'%s' is not a ref: use run:ID, experiment:ID or project:ID",
                         n.on);
  if (when && probe_cli_time(when, &n.created_ms))
    return probe_cli_err(2, "note", "--time: '%s' is not a time", when);
  pmcp_buf body = PMCP_BUF_INIT, sum = PMCP_BUF_INIT;
  int rd = !text || strcmp(text, "-") == 0 ? probe_cli_read_file("-", &body)
                                           : probe_cli_text_arg(text, &body);
  if (rd)
    return probe_cli_err(1, "note", "cannot read %s", text && text[0] == '@' ? text + 1 : "stdin");
  if (summary && probe_cli_text_arg(summary, &sum)) {
    pmcp_buf_dispose(&body);
    return probe_cli_err(1, "note", "cannot read %s", summary + 1);
  }
  n.body = body.ptr;
  n.summary = summary ? sum.ptr : NULL;
  if (!n.via)
    n.via = "cli";
  pmcp_store *s;
  pmcp_tenant t;
  int rc = 1;
  if (probe_cli_open(g, team ? PMCP_STORE_CREATE : 0, &s, &t) == 0) {
    pmcp_buf id = PMCP_BUF_INIT;
    int64_t v = 0;
    rc = pmcp_store_note(s, t, &n, &id, &v);
    if (rc == 0)
      printf("%s%s v%lld\n", team ? "" : "note:", team ? "team-note" : id.ptr, (long long)v);
    else
      probe_cli_fail("note", s, rc);
    pmcp_buf_dispose(&id);
    pmcp_store_free(s);
  }
  pmcp_buf_dispose(&body);
  pmcp_buf_dispose(&sum);
  return rc ? 1 : 0;
}
