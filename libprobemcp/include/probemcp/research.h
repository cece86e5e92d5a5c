/* SPDX-License-Identifier: MIT */
/**
 * @file research.h
 * The research toolset: read-only MCP tools over a pmcp_store that let an
 * agent find its way around a lab's experiment tracking data (`browse`,
 * `entity`, `search`, and the tools of later releases), with resources
 * (each run's card at probe://run/{id}) and prompts that guide the agent
 * through the tools.
 *
 * Read-only by construction: registration refuses a store that was not
 * opened with PMCP_STORE_READONLY, so no tool can reach a write.
 */
#ifndef PROBEMCP_RESEARCH_H
#define PROBEMCP_RESEARCH_H

#include "common.h"
#include "error.h"
#include "server.h"
#include "store.h"
#include "tool.h"

PMCP_BEGIN_DECLS

#define PMCP_RESEARCH_OPTIONS_VERSION 4

/** Options of pmcp_research_register(). Strings are copied. */
typedef struct pmcp_research_options {
  unsigned version;          /**< PMCP_RESEARCH_OPTIONS_VERSION */
  /** The lab whose data the tools read; NULL: "default". */
  const char *tenant;
  /** An OpenAI-compatible embeddings endpoint (a URL ending in
   *  /embeddings) for `search` with semantic=true, or NULL: the semantic
   *  channel is off and results say so. Needs a build with libcurl. */
  const char *embed_url;
  /** The model name sent to the endpoint; NULL: "text-embedding-3-small". */
  const char *embed_model;
  /** A bearer token for the endpoint, or NULL. */
  const char *embed_key;
  /* ---- version 2 ---- */
  /** A remote papers provider for `find_papers` (base URL; GET
   *  BASE/search?q=&categories=&limit=&offset=, BASE/papers/ID and
   *  BASE/papers/ID/similar?limit=, each answering JSON), or NULL: the
   *  store's local papers index. Needs a build with libcurl. */
  const char *papers_url;
  /** Whole-request timeout for the provider in ms; 0: 10000. */
  int papers_timeout_ms;
  /* ---- version 3 ---- */
  /** The workspace each call acts in (a host that authenticates its
   *  callers), or NULL: every workspace of the tenant unless the call
   *  names one in its optional `workspace` argument. Every store read of
   *  the call is then scoped to that workspace (pmcp_store_scope()).
   *  From version 4 the hook fills an opaque pmcp_call_scope through
   *  pmcp_call_scope_set_workspace() and the other setters; with version
   *  3 it is a hook built against release 0.1, which wrote into a struct
   *  of fixed-size strings, and is still served that way. */
  pmcp_scope_fn scope;
  void *scope_ud;
  /* ---- version 4: no new member; @c scope fills a pmcp_call_scope ---- */
} pmcp_research_options;

#define PMCP_RESEARCH_OPTIONS_INIT {PMCP_RESEARCH_OPTIONS_VERSION, NULL, NULL, NULL, NULL, \
    NULL, 0, NULL, NULL}

/**
 * Registers the research tools, resources and prompts on @p server.
 * @param store a store opened with PMCP_STORE_READONLY; borrowed: it must
 *        outlive @p server. The tools use it one call at a time.
 * @param opts NULL for the defaults.
 * @return 0; PMCP_EINVAL (store not read-only, unknown options version;
 *         detail in pmcp_server_errmsg() or the store's message);
 *         PMCP_ENOTFOUND (no such tenant); PMCP_EEXIST (a tool of the same
 *         name is already registered); PMCP_ENOMEM.
 */
PMCP_API int pmcp_research_register(pmcp_server *server, pmcp_store *store,
                                    const pmcp_research_options *opts);

/**
 * Computes and caches in @p store the embeddings of every indexed document
 * (runs, notes, summaries, artifacts' text, ...) that has none for the
 * model, or whose text changed, by calling @p opts->embed_url in batches.
 * This is the write side of search's semantic channel (`probe embed`);
 * the tools themselves never write.
 * @param store a writable store.
 * @param opts tenant, embed_url (required), embed_model, embed_key.
 * @param[out] out_embedded how many documents were embedded, or NULL.
 * @return 0; PMCP_EINVAL (no embed_url); PMCP_EREADONLY; PMCP_ENOTFOUND
 *         (tenant); PMCP_EREMOTE (the endpoint failed; the store's message
 *         says how); PMCP_EUNSUPPORTED (built without libcurl); PMCP_ENOMEM.
 */
PMCP_API int pmcp_research_embed(pmcp_store *store, const pmcp_research_options *opts,
                                 size_t *out_embedded);

PMCP_END_DECLS

#endif
