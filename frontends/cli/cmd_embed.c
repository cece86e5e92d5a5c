/* SPDX-License-Identifier: MIT */
/* probe embed: computes and caches the embeddings of the lab's indexed
 * documents (runs, notes, summaries, artifacts' text, ...) with an
 * OpenAI-compatible embeddings endpoint, for search semantic=true. Only
 * documents without a vector for the model, or whose text changed, are
 * sent. */
#include <stdio.h>
#include <stdlib.h>

#include "cli_util.h"
#include "commands.h"
#include "probemcp/probemcp.h"

int probe_cmd_embed(const probe_globals *g, int argc, char **argv)
{
  const char *url = getenv("PROBE_EMBED_URL");
  const char *model = getenv("PROBE_EMBED_MODEL");
  const char *key = getenv("PROBE_EMBED_KEY");
  for (int i = 1; i < argc; i++) {
    int m;
    if (probe_cli_is_help(argv[i])) {
      printf("usage: probe embed [--url URL] [--model NAME]\n\n"
             "Computes and caches in the store the embeddings of every indexed\n"
             "document that has none for the model (or whose text changed), for\n"
             "search semantic=true. URL is an OpenAI-compatible embeddings endpoint\n"
             "(default: $PROBE_EMBED_URL); the model defaults to $PROBE_EMBED_MODEL,\n"
             "else text-embedding-3-small; $PROBE_EMBED_KEY is sent as a bearer token.\n");
      return 0;
    }
    if ((m = probe_cli_opt(argc, argv, &i, "--url", &url, "embed")) ||
        (m = probe_cli_opt(argc, argv, &i, "--model", &model, "embed"))) {
      if (m < 0)
        return 2;
    } else {
      return probe_cli_err(2, "embed", "unknown argument '%s'", argv[i]);
    }
  }
  if (!url || !*url)
    return probe_cli_err(2, "embed", "no endpoint: give --url or set PROBE_EMBED_URL");
  pmcp_store *s;
  pmcp_tenant t;
  if (probe_cli_open(g, 0, &s, &t))
    return 1;
  pmcp_research_options o = PMCP_RESEARCH_OPTIONS_INIT;
  o.tenant = g->tenant;
  o.embed_url = url;
  o.embed_model = model;
  o.embed_key = key;
  size_t n = 0;
  int rc = pmcp_research_embed(s, &o, &n);
  if (rc) {
    probe_cli_err(1, "embed", "%s (%zu documents embedded before)",
                  *pmcp_store_errmsg(s) ? pmcp_store_errmsg(s) : pmcp_strerror(rc), n);
    pmcp_store_free(s);
    return 1;
  }
  if (!g->quiet)
    fprintf(stderr, "probe embed: %zu documents embedded\n", n);
  printf("%zu\n", n);
  pmcp_store_free(s);
  return 0;
}
