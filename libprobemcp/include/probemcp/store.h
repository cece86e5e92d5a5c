/* SPDX-License-Identifier: MIT */
/**
 * @file store.h
 * The research store: the data the research tools read and the only write
 * path (the `probe` CLI and its importers write through it).
 *
 * A pmcp_store is an opaque handle over a backend, which is a table of
 * functions (pmcp_store_ops). The embedded default is SQLite (one file,
 * created on first use, WAL mode); a host may supply its own backend with
 * pmcp_store_new_custom(). `postgresql://` URLs name the PostgreSQL backend.
 *
 * Tenants. A tenant is a lab, the unit of isolation. Every read call takes
 * a pmcp_tenant obtained from pmcp_store_tenant(); there is no read call
 * without one, and the backend (not the caller) scopes every row to it.
 * Writes take the tenant too. A store created without a tenant name has the
 * tenant "default".
 *
 * Refs. Entities are named by strings "kind:id" (run:ID, experiment:ID,
 * project:ID, workspace:ID, artifact:NAME or artifact:ID, dataset:NAME or
 * dataset:NAME@VERSION, checkpoint:RUN@best|@latest|@stepN, source:ID,
 * group:ID, trial:ID, session:ID, note:ID, sub-note:ID, paper:ARXIVID,
 * file:ID, team-note). Ids use only [A-Za-z0-9._-]. Calls that take one
 * kind of entity also accept the bare id.
 *
 * Records. Reads return JSON text in a pmcp_buf (the caller disposes it):
 * one object for pmcp_store_get(), `{"items":[...],"total":N,"next":P}` for
 * pmcp_store_list() and pmcp_store_search() (P is null or an opaque position
 * string to pass back as `after`). The fields of each kind are listed in
 * pmcp_store(3). Times are integer milliseconds since the Unix epoch (UTC);
 * 0 means "not recorded" (writes) or "now" where a creation time is asked.
 *
 * Versions. Every committed change bumps the tenant's data version
 * (pmcp_store_version()), which cursors bind to.
 *
 * Transactions. Each write call is atomic on its own. pmcp_store_begin()
 * ... pmcp_store_commit() makes a group of writes atomic (an import);
 * pmcp_store_rollback() leaves the store exactly as before begin. Metric
 * points logged inside a transaction become visible at commit.
 *
 * Thread-safety: a pmcp_store is used by one thread at a time. Several
 * handles (in one or several processes) may use the same store at once;
 * concurrent writers are serialized by the backend.
 */
#ifndef PROBEMCP_STORE_H
#define PROBEMCP_STORE_H

#include "common.h"
#include "error.h"
#include "tasks.h"

PMCP_BEGIN_DECLS

typedef struct pmcp_store pmcp_store;

/** A tenant scope, passed by value to every read and write. Obtain it from
 *  pmcp_store_tenant(); a zeroed value is invalid (PMCP_EINVAL).
 *  pmcp_store_scope() narrows it to one workspace of the tenant. */
typedef struct pmcp_tenant {
  int64_t id;
  /** 0: every workspace of the tenant. Otherwise set by pmcp_store_scope():
   *  reads see only that workspace's rows (see pmcp_store_scope()). */
  int64_t workspace;
  /** With @c workspace: it is the tenant's "default" workspace, which also
   *  holds what no project files (unfiled runs and what hangs off them). */
  int unfiled;
} pmcp_tenant;

/** Flags of pmcp_store_open(). */
enum {
  /** Open read-only: never writes, never creates, never migrates. A store
   *  whose schema is older than the library's is refused (PMCP_ESTORE). */
  PMCP_STORE_READONLY = 1u << 0,
  /** Create the store (and its folder) if it does not exist. Without it a
   *  missing store is PMCP_ENOTFOUND. */
  PMCP_STORE_CREATE = 1u << 1
};

/**
 * Resolves where a store lives: @p where if non-NULL and non-empty, else
 * $PROBE_STORE, else $XDG_DATA_HOME/probe/store.db, else
 * $HOME/.local/share/probe/store.db.
 * @param[out] out the path or URL (caller disposes).
 * @return 0; PMCP_EINVAL when no location can be found (no HOME);
 *         PMCP_ENOMEM.
 */
PMCP_API int pmcp_store_resolve(pmcp_buf *out, const char *where);

/**
 * Like pmcp_store_resolve(), for showing to a person: a PostgreSQL URL's
 * password (user:PASSWORD@ and password=VALUE) reads "***".
 * @param[out] out the path or URL (caller disposes).
 * @return 0; PMCP_EINVAL when no location can be found; PMCP_ENOMEM.
 */
PMCP_API int pmcp_store_describe(pmcp_buf *out, const char *where);

/**
 * Reads a time as the store keeps times (milliseconds since the Unix
 * epoch, UTC): an ISO 8601 date or date-time ("2024-05-01",
 * "2024-05-01T12:00:00.250Z", "...+02:00", "2024-05-01 12:00"; UTC when no
 * zone is given; a date alone is its midnight), as the tracking tools'
 * filters read them. @return 0; PMCP_EINVAL when @p s is none of these.
 */
PMCP_API int pmcp_time_parse(const char *s, int64_t *ms);
/** Bytes pmcp_time_format() needs for any time, NUL included. */
#define PMCP_TIME_MAX 32
/** Writes @p ms as "2024-05-01T12:00:00.250Z" (UTC, milliseconds), the form
 *  the tracking tools show, into @p out of @p size bytes. @return 0,
 *  PMCP_ETOOBIG (@p out left "") or PMCP_EINVAL (NULL @p out). */
PMCP_API int pmcp_time_format(int64_t ms, char *out, size_t size);

/**
 * Opens (or with PMCP_STORE_CREATE creates) a store. @p where is resolved
 * as pmcp_store_resolve() does. A `postgresql://` or `postgres://` URL
 * selects the PostgreSQL backend (PMCP_EUNSUPPORTED while it is not built).
 * A new store gets the tenant "default" and a random 32-byte server secret
 * "cursor_key" (see pmcp_store_secret()).
 * @param[out] out the store; on failure also a store (so
 *        pmcp_store_errmsg() can say why) unless memory ran out, or NULL.
 *        Always free it with pmcp_store_free().
 * @return 0; PMCP_EINVAL (bad flags); PMCP_ENOTFOUND (missing, no CREATE);
 *         PMCP_ESTORE (not a store, newer or, read-only, older schema);
 *         PMCP_ECORRUPT (a damaged file); PMCP_EREADONLY (read-write, in a
 *         read-only folder); PMCP_ETIMEOUT (another writer held it past
 *         $PROBE_STORE_WAIT seconds); PMCP_EIO; PMCP_EUNSUPPORTED;
 *         PMCP_ENOMEM.
 */
PMCP_API int pmcp_store_open(pmcp_store **out, const char *where, unsigned flags);

/** Flushes pending points, rolls back an open transaction, closes. NULL ok. */
PMCP_API void pmcp_store_free(pmcp_store *store);

/** The message of the last failure on @p store ("" if none). Borrowed:
 *  valid until the next call on the store. Never NULL. */
PMCP_API const char *pmcp_store_errmsg(const pmcp_store *store);

/** Non-zero when the store was opened read-only. */
PMCP_API int pmcp_store_readonly(const pmcp_store *store);

/** The backend's name: "sqlite", "postgres" or the custom backend's. */
PMCP_API const char *pmcp_store_backend(const pmcp_store *store);

/* ------------------------------------------------------------------ */
/* Tenants, secrets, versions, transactions                           */

/**
 * Finds the tenant named @p name (NULL: "default"); with
 * PMCP_STORE_CREATE in @p flags creates it when missing.
 * @return 0; PMCP_ENOTFOUND; PMCP_EINVAL (bad name); PMCP_EREADONLY.
 */
PMCP_API int pmcp_store_tenant(pmcp_store *store, const char *name, unsigned flags,
                               pmcp_tenant *out);

/**
 * Narrows tenant @p t to one of its workspaces (@p workspace: its id, or
 * a "workspace:ID" ref; NULL: every workspace, as @p t came from
 * pmcp_store_tenant()). Every read and every ref lookup with the result
 * sees only:
 *  - the workspace's projects, their experiments, the runs filed in them
 *    and whatever hangs off those (notes, artifacts, datasets, checkpoints,
 *    trials, groups, series, points, events, attributes, search hits);
 *  - in the tenant's "default" workspace also what no project files:
 *    unfiled runs and what hangs off them, datasets without a project,
 *    groups without an experiment;
 *  - lab-wide records from every workspace: the team note, lab-wide
 *    artifacts, sources, the papers index, the shared files folder; a
 *    session or a lineage edge only when every ref it names is visible.
 * A row outside the scope is PMCP_ENOTFOUND, exactly like a missing one.
 * The "default" workspace always exists (its row is made on first use).
 * @param[out] out the narrowed tenant.
 * @return 0; PMCP_ENOTFOUND (no such workspace in the tenant);
 *         PMCP_EINVAL (bad id or tenant); PMCP_EUNSUPPORTED (a custom
 *         backend: it cannot scope its reads).
 */
PMCP_API int pmcp_store_scope(pmcp_store *store, pmcp_tenant t, const char *workspace,
                              pmcp_tenant *out);

/**
 * Reads a server secret created with the store (readable read-only).
 * "cursor_key" is the 32-byte HMAC key cursors are signed with.
 * @param[out] out the raw bytes (caller disposes).
 * @return 0; PMCP_ENOTFOUND.
 */
PMCP_API int pmcp_store_secret(pmcp_store *store, const char *name, pmcp_buf *out);

/**
 * A task store (tasks.h) over the tasks table of the store at @p where
 * (resolved as pmcp_store_open() does), for tenant @p tenant (NULL:
 * "default"): tasks that survive a restart and that every process sharing
 * the store serves (every replica of one PostgreSQL database). It opens a
 * read-write handle of its own, which its release callback closes (the
 * server calls it when freed; call it yourself if the store is never given
 * to a server). Its owner callback is NULL: a host with identities sets
 * it. Records expire an hour after their last change and are swept. Its
 * lease_ms is $PROBE_TASK_LEASE_MS when that is a positive number, else 0
 * (the engine's default).
 * @param why on failure, why (may be NULL).
 * @return 0; the errors of pmcp_store_open() (PMCP_EREADONLY for a store
 *         that cannot be written) and pmcp_store_tenant().
 */
PMCP_API int pmcp_store_task_store(const char *where, const char *tenant,
                                   pmcp_task_store *out, char *why, size_t why_size);

/** The tenant's data version: changes on every committed write to the
 *  tenant. @return 0; PMCP_EINVAL (bad tenant). */
PMCP_API int pmcp_store_version(pmcp_store *store, pmcp_tenant t, uint64_t *out);

/** Starts a transaction (one at a time: PMCP_EMISUSE when one is open).
 *  Waits for other writers up to the busy timeout (PMCP_ETIMEOUT). */
PMCP_API int pmcp_store_begin(pmcp_store *store);
/** Commits (flushing pending metric points). @return 0; PMCP_EMISUSE with
 *  no transaction open; on failure the transaction is rolled back. */
PMCP_API int pmcp_store_commit(pmcp_store *store);
/** Rolls back: the store is as it was before pmcp_store_begin(). */
PMCP_API int pmcp_store_rollback(pmcp_store *store);

/* ------------------------------------------------------------------ */
/* Typed values                                                       */

typedef enum pmcp_value_type {
  PMCP_V_STRING = 1,
  PMCP_V_INT = 2,
  PMCP_V_FLOAT = 3,
  PMCP_V_BOOL = 4,
  PMCP_V_DATETIME = 5,   /**< @c i: milliseconds since the epoch, UTC */
  PMCP_V_STRING_SET = 6  /**< @c set / @c n_set */
} pmcp_value_type;

/** A typed attribute value. Strings are copied. */
typedef struct pmcp_value {
  pmcp_value_type type;
  const char *s;            /**< STRING */
  int64_t i;                /**< INT, BOOL (0/1), DATETIME */
  double f;                 /**< FLOAT */
  const char *const *set;   /**< STRING_SET */
  size_t n_set;
} pmcp_value;

/* ------------------------------------------------------------------ */
/* Hierarchy: workspaces, projects, experiments, runs                 */

/** Flags of the create calls. */
enum {
  /** When an entity with the given id already exists, succeed and return
   *  its id without changing it (idempotent imports). Without it,
   *  PMCP_EEXIST. */
  PMCP_STORE_REUSE = 1u << 4
};

#define PMCP_ENTITY_SPEC_VERSION 1
/** A workspace, project or experiment to create. Strings are copied. */
typedef struct pmcp_entity_spec {
  unsigned version;        /**< PMCP_ENTITY_SPEC_VERSION */
  const char *id;          /**< NULL: derived from the name */
  const char *name;        /**< required */
  /** Parent: a project's workspace (NULL: the tenant's default workspace,
   *  created on demand); an experiment's project (required). */
  const char *parent;
  const char *description; /**< or NULL */
  /** Project: its README (Markdown). Experiment: its configuration that its
   *  runs inherit, a JSON object. Workspace: unused. */
  const char *body;
  int deleted;             /**< experiments: imported as deleted (hidden) */
  int64_t created_ms;      /**< 0: now */
  unsigned flags;          /**< PMCP_STORE_REUSE */
} pmcp_entity_spec;

#define PMCP_ENTITY_SPEC_INIT {PMCP_ENTITY_SPEC_VERSION, NULL, NULL, NULL, NULL, NULL, 0, 0, 0}

/**
 * Creates a workspace, project or experiment (@p kind "workspace",
 * "project", "experiment").
 * @param[out] out_id the id (caller disposes), or NULL.
 * @return 0; PMCP_EEXIST; PMCP_ENOTFOUND (parent); PMCP_EINVAL (bad id,
 *         name or kind); PMCP_EREADONLY.
 */
PMCP_API int pmcp_store_create(pmcp_store *store, pmcp_tenant t, const char *kind,
                               const pmcp_entity_spec *spec, pmcp_buf *out_id);

#define PMCP_RUN_SPEC_VERSION 1
/** A run to create. Strings are copied. */
typedef struct pmcp_run_spec {
  unsigned version;          /**< PMCP_RUN_SPEC_VERSION */
  const char *id;            /**< NULL: generated */
  const char *name;          /**< NULL: the id */
  const char *project;       /**< NULL: the experiment's, or unfiled */
  const char *experiment;    /**< or NULL */
  const char *status;        /**< running|finished|failed|killed; NULL: running */
  const char *description;
  int64_t created_ms;        /**< 0: now */
  int64_t started_ms, ended_ms; /**< 0: not recorded */
  const char *command;       /**< the command line, or NULL */
  const char *environment;   /**< JSON object (env vars, host, versions) or NULL */
  /* Code state, as `probe run create --git DIR` captures it. */
  const char *git_commit, *git_branch, *git_remote;
  const char *git_diff;      /**< uncommitted changes (a unified diff) or NULL */
  int git_dirty;
  int deleted;               /**< imported as deleted (hidden) */
  unsigned flags;            /**< PMCP_STORE_REUSE */
} pmcp_run_spec;

#define PMCP_RUN_SPEC_INIT {PMCP_RUN_SPEC_VERSION, NULL, NULL, NULL, NULL, NULL, NULL, \
    0, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, 0}

/** Creates a run. @return as pmcp_store_create(). */
PMCP_API int pmcp_store_run_create(pmcp_store *store, pmcp_tenant t,
                                   const pmcp_run_spec *spec, pmcp_buf *out_id);

/**
 * Sets a run's status (running|finished|failed|killed) and records a
 * status event at @p time_ms (0: now); finished/failed/killed also set the
 * end time, running the start time when unset.
 * @return 0; PMCP_ENOTFOUND; PMCP_EINVAL (unknown status).
 */
PMCP_API int pmcp_store_run_status(pmcp_store *store, pmcp_tenant t, const char *run,
                                   const char *status, int64_t time_ms);

/** Appends an event to a run's event log (kind such as "status", "log",
 *  "warning", "error"; a message). @return 0; PMCP_ENOTFOUND; PMCP_EINVAL. */
PMCP_API int pmcp_store_run_event(pmcp_store *store, pmcp_tenant t, const char *run,
                                  const char *kind, const char *message, int64_t time_ms);

/** Marks an entity (run:, experiment:) deleted (hidden unless asked for) or
 *  restores it. @return 0; PMCP_ENOTFOUND; PMCP_EINVAL. */
PMCP_API int pmcp_store_set_deleted(pmcp_store *store, pmcp_tenant t, const char *ref,
                                    int deleted);

/**
 * Sets one typed attribute on a run, experiment or project. @p path is
 * slash-separated (`config/optimizer/lr`, `params/seed`, `sys/name`);
 * setting a path replaces its value. Experiment attributes under `config/`
 * are inherited by the experiment's runs (see the run's "inherited" field).
 * @return 0; PMCP_ENOTFOUND; PMCP_EINVAL (bad path or value).
 */
PMCP_API int pmcp_store_set_attr(pmcp_store *store, pmcp_tenant t, const char *ref,
                                 const char *path, const pmcp_value *value);

/** Removes one attribute. @return 0; PMCP_ENOTFOUND (entity or path). */
PMCP_API int pmcp_store_unset_attr(pmcp_store *store, pmcp_tenant t, const char *ref,
                                   const char *path);

/** Adds (@p add non-zero) or removes a tag on a run, experiment or
 *  project. Adding a present tag is not an error. */
PMCP_API int pmcp_store_tag(pmcp_store *store, pmcp_tenant t, const char *ref,
                            const char *tag, int add);

/* ------------------------------------------------------------------ */
/* Metric series                                                      */

typedef enum pmcp_metric_kind {
  PMCP_METRIC_FLOAT = 1,
  PMCP_METRIC_HISTOGRAM = 2,
  PMCP_METRIC_SCATTER = 3
} pmcp_metric_kind;

typedef enum pmcp_metric_scale {
  PMCP_SCALE_STEP = 1,
  PMCP_SCALE_ENV_STEP = 2,   /**< RL environment step */
  PMCP_SCALE_EPISODE = 3     /**< RL episode */
} pmcp_metric_scale;

/** One label of a series (rank, env, episode, ...). */
typedef struct pmcp_label {
  const char *key;
  const char *value;
} pmcp_label;

#define PMCP_SERIES_SPEC_VERSION 1

/** Identifies a series: key + labels + kind + scale. */
typedef struct pmcp_series_spec {
  unsigned version;           /**< PMCP_SERIES_SPEC_VERSION */
  const char *key;            /**< e.g. "train/loss" (required) */
  const pmcp_label *labels;   /**< order does not matter */
  size_t n_labels;
  pmcp_metric_kind kind;      /**< 0: FLOAT */
  pmcp_metric_scale scale;    /**< 0: STEP */
} pmcp_series_spec;

#define PMCP_SERIES_SPEC_INIT {PMCP_SERIES_SPEC_VERSION, NULL, NULL, 0, (pmcp_metric_kind)0, \
    (pmcp_metric_scale)0}

/** One float point. */
typedef struct pmcp_point {
  int64_t step;
  int64_t time_ms;  /**< wall clock, 0: not recorded */
  double value;     /**< any double, NaN and infinities included */
} pmcp_point;

/**
 * Finds or creates the series @p spec of @p run.
 * @param[out] out_series the series id for the log and read calls.
 * @return 0; PMCP_ENOTFOUND (run); PMCP_EINVAL (no key, bad label).
 */
PMCP_API int pmcp_store_series(pmcp_store *store, pmcp_tenant t, const char *run,
                               const pmcp_series_spec *spec, int64_t *out_series);

/**
 * Logs @p n float points to a FLOAT series. Points are stored in
 * compressed blocks; outside a transaction they are durable when this
 * returns, inside one at commit.
 * @return 0; PMCP_ENOTFOUND; PMCP_EINVAL (not a FLOAT series).
 */
PMCP_API int pmcp_store_log(pmcp_store *store, pmcp_tenant t, int64_t series,
                            const pmcp_point *points, size_t n);

/** Logs one histogram (n_bins counts over n_bins + 1 ascending edges) at
 *  @p step to a HISTOGRAM series. @return 0; PMCP_EINVAL; PMCP_ENOTFOUND. */
PMCP_API int pmcp_store_log_histogram(pmcp_store *store, pmcp_tenant t, int64_t series,
                                      int64_t step, int64_t time_ms,
                                      const double *edges, const double *counts,
                                      size_t n_bins);

/** Logs one scatter set of @p n (x, y) pairs at @p step to a SCATTER
 *  series. @return 0; PMCP_EINVAL; PMCP_ENOTFOUND. */
PMCP_API int pmcp_store_log_scatter(pmcp_store *store, pmcp_tenant t, int64_t series,
                                    int64_t step, int64_t time_ms,
                                    const double *x, const double *y, size_t n);

/* ------------------------------------------------------------------ */
/* Notes, artifacts, papers                                           */

#define PMCP_NOTE_SPEC_VERSION 1
/** A note, or a new version of one. Strings are copied. */
typedef struct pmcp_note_spec {
  unsigned version;       /**< PMCP_NOTE_SPEC_VERSION */
  /** An existing note to add a version to (note:ID or the id), or NULL to
   *  create one. */
  const char *id;
  /** What it is about: project:, experiment:, run: ref; NULL with kind
   *  "team" (the tenant's team note). */
  const char *on;
  /** note (operational note), overview (the Overview page of a project or
   *  experiment, one per entity: writing it again adds a version), handoff,
   *  sub-note (needs @c parent), team (one per tenant). NULL: note. */
  const char *kind;
  const char *parent;     /**< sub-note: the note it belongs to */
  const char *title;
  const char *body;       /**< Markdown (required) */
  /** The block a person wrote on an overview page (NULL: none). */
  const char *summary;
  const char *status;     /**< overview: e.g. "draft", "in-progress", "done" */
  const char *author;     /**< who */
  const char *via;        /**< through what: "cli", "import", "agent:NAME", ... */
  int64_t created_ms;     /**< 0: now */
} pmcp_note_spec;

#define PMCP_NOTE_SPEC_INIT {PMCP_NOTE_SPEC_VERSION, NULL, NULL, NULL, NULL, NULL, \
    NULL, NULL, NULL, NULL, NULL, 0}

/**
 * Writes a note or a new version of one (versions count from 1).
 * @param[out] out_id the note id (caller disposes), or NULL.
 * @param[out] out_version the version written, or NULL.
 * @return 0; PMCP_ENOTFOUND (id, on, parent); PMCP_EINVAL.
 */
PMCP_API int pmcp_store_note(pmcp_store *store, pmcp_tenant t, const pmcp_note_spec *spec,
                             pmcp_buf *out_id, int64_t *out_version);

#define PMCP_ARTIFACT_SPEC_VERSION 1
/** One version of an artifact: inline content or a reference. */
typedef struct pmcp_artifact_spec {
  unsigned version;        /**< PMCP_ARTIFACT_SPEC_VERSION */
  const char *name;        /**< required; versions count per (on, name) */
  const char *on;          /**< run:, experiment:, project: ref; NULL: lab-wide */
  const char *path;        /**< original file name or path, or NULL */
  const char *media_type;  /**< NULL: guessed (text/plain or
                                application/octet-stream) */
  const char *description;
  const void *content;     /**< stored bytes, or NULL for a reference */
  size_t size;             /**< content length; for a reference its size */
  const char *uri;         /**< reference (s3://, https://, file path) */
  const char *sha256;      /**< reference: its hex digest, or NULL;
                                content: computed */
  const char *const *labels; /**< labels of this version ("best", "prod") */
  size_t n_labels;
  int64_t created_ms;      /**< 0: now */
} pmcp_artifact_spec;

#define PMCP_ARTIFACT_SPEC_INIT {PMCP_ARTIFACT_SPEC_VERSION, NULL, NULL, NULL, NULL, \
    NULL, NULL, 0, NULL, NULL, NULL, 0, 0}

/**
 * Adds a version of an artifact. A label moves: giving a label that an
 * older version carries takes it from that version.
 * @param[out] out_id the artifact id (caller disposes), or NULL.
 * @param[out] out_version the new version number, or NULL.
 * @return 0; PMCP_EINVAL (no name, neither content nor uri); PMCP_ENOTFOUND.
 */
PMCP_API int pmcp_store_artifact_add(pmcp_store *store, pmcp_tenant t,
                                     const pmcp_artifact_spec *spec,
                                     pmcp_buf *out_id, int64_t *out_version);

/** Adds a label to one version of an artifact (moving it). */
PMCP_API int pmcp_store_artifact_label(pmcp_store *store, pmcp_tenant t, const char *ref,
                                       int64_t version, const char *label);

/** Promotes an artifact to the shared, lab-wide level, where
 *  `artifact:NAME` resolves. @return 0; PMCP_ENOTFOUND; PMCP_EEXIST (another
 *  shared artifact has the name). */
PMCP_API int pmcp_store_artifact_promote(pmcp_store *store, pmcp_tenant t, const char *ref);

/**
 * Reads one version's bytes (@p version 0: the latest).
 * @param[out] out the content (caller disposes).
 * @param[out] meta the version's JSON record (caller disposes), or NULL.
 * @return 0; PMCP_ENOTFOUND; PMCP_EUNSUPPORTED for a reference (meta still
 *         filled: its uri).
 */
PMCP_API int pmcp_store_artifact_content(pmcp_store *store, pmcp_tenant t, const char *ref,
                                         int64_t version, pmcp_buf *out, pmcp_buf *meta);

#define PMCP_PAPER_VERSION 1

/** An arXiv-style paper record for the local papers index. */
typedef struct pmcp_paper {
  unsigned version;        /**< PMCP_PAPER_VERSION */
  const char *id;          /**< arXiv id, e.g. "0704.0001" (required) */
  const char *title;       /**< required */
  const char *abstract;
  const char *authors;     /**< as written, comma separated */
  const char *categories;  /**< space separated, e.g. "hep-ph cs.LG" */
  const char *published;   /**< first version date, YYYY-MM-DD or NULL */
  const char *updated;     /**< YYYY-MM-DD or NULL */
  const char *doi, *journal_ref, *comments;
} pmcp_paper;

#define PMCP_PAPER_INIT {PMCP_PAPER_VERSION, NULL, NULL, NULL, NULL, NULL, NULL, NULL, \
    NULL, NULL, NULL}

/** Inserts or replaces a paper in the tenant's papers index (full-text
 *  indexed). @return 0; PMCP_EINVAL. */
PMCP_API int pmcp_store_paper(pmcp_store *store, pmcp_tenant t, const pmcp_paper *paper);

/* ------------------------------------------------------------------ */
/* The catalog and everything else, as JSON records                   */

/**
 * Creates or updates a record of one of the catalog kinds, described by a
 * JSON object (fields per kind in pmcp_store(3)):
 *  - "dataset" {id?, name, project?, registered?, description?, uri?}
 *  - "dataset-version" {dataset, version?, uri?, sha256?, size?, rows?,
 *    description?}
 *  - "checkpoint" {run, step, best?, stored?, uri?, size?, metric?, value?}
 *  - "source" {id?, provider, kind, uri, version?, description?}
 *  - "lineage" {from, to, relation?, steps?: [{name, description?}]}:
 *    @c to was made from @c from (refs of any kind)
 *  - "group" {id?, name, experiment?, description?, runs?: [run ids]}
 *  - "trial" {id?, run, name?, params?: {}, status?, score?, trajectory?: []}
 *  - "session" {id?, title, agent?, started?, ended?, on?: [refs],
 *    transcript?: [{role, content, time?}]}
 *  - "file" {path, workspace? (absent: the shared folder), content | uri,
 *    media_type?}
 *  - "paper-link" {project, paper, note?}: a paper the project cites
 *  - "experiment-version" {experiment, description?, config?: {}, author?}
 *  - "run-use" {run, uses}: the run used a dataset/source/checkpoint/artifact
 *    (a lineage edge from @c uses to the run)
 * Idempotent where the kind has an identity (ids, names, (dataset,
 * version), (run, step)): writing the same record again changes nothing.
 * @param[out] out_ref the record's ref (caller disposes), or NULL.
 * @return 0; PMCP_EINVAL (unknown kind, bad JSON, missing or mistyped field,
 *         named in the message); PMCP_ENOTFOUND (a referenced entity).
 */
PMCP_API int pmcp_store_put(pmcp_store *store, pmcp_tenant t, const char *kind,
                            const char *json, size_t len, pmcp_buf *out_ref);

/* ------------------------------------------------------------------ */
/* Reads                                                              */

/**
 * Reads one entity's full record as a JSON object, with its kind, ref and
 * everything the entity views show (a run: status, timings, attributes as
 * nested config, tags, inherited config, code state, command, environment,
 * series catalog, events, ...).
 * Deleted entities are found (with "deleted": true).
 * @return 0; PMCP_ENOTFOUND (also for another tenant's rows); PMCP_EINVAL
 *         (unknown kind: named in the message).
 */
PMCP_API int pmcp_store_get(pmcp_store *store, pmcp_tenant t, const char *ref,
                            pmcp_buf *out);

#define PMCP_LIST_OPTS_VERSION 1
/** What to list. */
typedef struct pmcp_list_opts {
  unsigned version;       /**< PMCP_LIST_OPTS_VERSION */
  /** workspace, project, experiment, run, note, note-version, artifact,
   *  artifact-version, dataset, dataset-version, checkpoint, source,
   *  lineage, group, trial, session, file, paper, event, series,
   *  experiment-version, attribute */
  const char *kind;
  /** Narrows to the children of a ref (runs of experiment:X or project:X,
   *  notes on run:X, versions of note:X / artifact:X / dataset:X, events of
   *  run:X, files of workspace:X, lineage touching X, ...), or NULL. */
  const char *parent;
  /** Literal substring on names and (notes) text, or NULL. */
  const char *query;
  /** Kind-specific narrowing as a JSON object, e.g. {"status":"running"},
   *  {"best":true}, {"provider":"hf"}, {"shared":true}, {"unfiled":true},
   *  {"direction":"downstream"}; or NULL. */
  const char *filter;
  int include_deleted;
  const char *after;      /**< the previous page's "next", or NULL */
  size_t limit;           /**< 0: 50; at most 1000 */
} pmcp_list_opts;

#define PMCP_LIST_OPTS_INIT {PMCP_LIST_OPTS_VERSION, NULL, NULL, NULL, NULL, 0, NULL, 0}

/**
 * Lists records, newest first where the kind has a time (runs, notes,
 * sessions, events), else by name or version.
 * @param[out] out {"items":[...],"total":N,"next":P}; "total_estimated":true
 *   after "total" when more than 10,000 items follow the page: counting
 *   stops there and N is a lower bound.
 * @return 0; PMCP_EINVAL (unknown kind, bad filter, foreign position);
 *         PMCP_ENOTFOUND (parent).
 */
PMCP_API int pmcp_store_list(pmcp_store *store, pmcp_tenant t, const pmcp_list_opts *opts,
                             pmcp_buf *out);

/**
 * Keyword search (full text, BM25-ranked) over run names and configs,
 * notes and summaries, artifacts' text, datasets, sources, sessions and,
 * with "paper" in @p kinds, the papers index. @p query is plain words
 * (no query syntax: quotes and operators are taken literally).
 * @param kinds space-separated kinds to search, or NULL for all but papers.
 * @param[out] out {"items":[{ref, kind, title, snippet, score}],"total":N,
 *        "next":P}; score rises with relevance.
 * @return 0; PMCP_EINVAL (empty query, bad position).
 */
PMCP_API int pmcp_store_search(pmcp_store *store, pmcp_tenant t, const char *query,
                               const char *kinds, const char *after, size_t limit,
                               pmcp_buf *out);

/** The series of a run as JSON: {"items":[{series, key, labels:{},
 *  kind, scale, count, nonfinite, step_min, step_max, time_min, time_max,
 *  first, last, min, max, mean}]}; min, max and mean skip non-finite
 *  values; numbers have 15 significant digits (never rounded past
 *  DBL_MAX); mean is null when the series' sum is not a finite double. */
PMCP_API int pmcp_store_series_list(pmcp_store *store, pmcp_tenant t, const char *run,
                                    pmcp_buf *out);

/**
 * Reads raw points of a FLOAT series in logging order, losslessly, with
 * steps in [@p step_from, @p step_to] (inclusive; use INT64_MIN / INT64_MAX
 * for open ends), starting after position @p after_id (0: from the start).
 * Only blocks overlapping the step range are decoded.
 * @param[out] out up to @p cap points.
 * @param[out] n_out how many were written.
 * @param[out] next_id the position to continue from (0 when the range is
 *        exhausted); pass it as @p after_id.
 * @return 0; PMCP_ENOTFOUND (series not in the tenant); PMCP_EINVAL.
 */
PMCP_API int pmcp_store_points(pmcp_store *store, pmcp_tenant t, int64_t series,
                               int64_t step_from, int64_t step_to, int64_t after_id,
                               pmcp_point *out, size_t cap, size_t *n_out,
                               int64_t *next_id);

/** One bucket of a downsampled series. Non-finite values are counted in
 *  @c nonfinite and left out of min/max/sum. The sum is the true sum of
 *  the finite values rounded once: +/-Inf only when that is out of a
 *  double's range (values near DBL_MAX), never NaN. */
typedef struct pmcp_bucket {
  int64_t step_min, step_max;   /**< steps of the points in the bucket */
  int64_t time_min, time_max;
  uint64_t count;               /**< points, finite or not */
  uint64_t nonfinite;
  double min, max, sum;         /**< over finite values */
  int64_t step_at_min, step_at_max;
  double first, last;           /**< values at the first and last point */
  int64_t step_first, step_last;
} pmcp_bucket;

/**
 * Summarizes a FLOAT series over [@p step_from, @p step_to] into at most
 * @p n_buckets buckets of equal step width, from per-block summaries where
 * a bucket spans whole blocks (without decoding them) and from the points
 * where it does not. Exact: each bucket is what its points give (sums may
 * be added in another order). Empty buckets are left out.
 * @param[out] out up to @p n_buckets buckets; @p n_out how many.
 * @return 0; PMCP_ENOTFOUND; PMCP_EINVAL (n_buckets 0).
 */
PMCP_API int pmcp_store_summary(pmcp_store *store, pmcp_tenant t, int64_t series,
                                int64_t step_from, int64_t step_to, size_t n_buckets,
                                pmcp_bucket *out, size_t *n_out);

/**
 * Like pmcp_store_summary() on the wall-clock axis: buckets of equal time
 * width over [@p time_from, @p time_to] (milliseconds since the epoch;
 * subtract a run's start for time since start). Points logged without a
 * time are left out.
 * @return 0; PMCP_ENOTFOUND; PMCP_EINVAL.
 */
PMCP_API int pmcp_store_summary_time(pmcp_store *store, pmcp_tenant t, int64_t series,
                                     int64_t time_from, int64_t time_to, size_t n_buckets,
                                     pmcp_bucket *out, size_t *n_out);

/** Reads histograms or scatter sets of a series with steps in range, as
 *  JSON {"items":[{id, step, time, edges, counts} | {id, step, time, x, y}],
 *  "next":P}. */
PMCP_API int pmcp_store_series_sets(pmcp_store *store, pmcp_tenant t, int64_t series,
                                    int64_t step_from, int64_t step_to,
                                    const char *after, size_t limit, pmcp_buf *out);

/* ------------------------------------------------------------------ */
/* Custom backends                                                    */

#define PMCP_STORE_OPS_VERSION 1
/**
 * A store backend: every public call above, minus the handle checks, goes
 * through this table. @c ctx is the backend's state. A NULL entry makes
 * the call fail with PMCP_EUNSUPPORTED. Backends report detail with
 * pmcp_store_set_error().
 */
typedef struct pmcp_store_ops {
  unsigned version;  /**< PMCP_STORE_OPS_VERSION */
  const char *name;
  void (*close)(pmcp_store *s, void *ctx);
  int (*tenant)(pmcp_store *s, void *ctx, const char *name, unsigned flags, pmcp_tenant *out);
  int (*secret)(pmcp_store *s, void *ctx, const char *name, pmcp_buf *out);
  int (*version_of)(pmcp_store *s, void *ctx, pmcp_tenant t, uint64_t *out);
  int (*begin)(pmcp_store *s, void *ctx);
  int (*commit)(pmcp_store *s, void *ctx);
  int (*rollback)(pmcp_store *s, void *ctx);
  int (*create)(pmcp_store *s, void *ctx, pmcp_tenant t, const char *kind,
                const pmcp_entity_spec *spec, pmcp_buf *out_id);
  int (*run_create)(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp_run_spec *spec,
                    pmcp_buf *out_id);
  int (*run_status)(pmcp_store *s, void *ctx, pmcp_tenant t, const char *run,
                    const char *status, int64_t time_ms);
  int (*run_event)(pmcp_store *s, void *ctx, pmcp_tenant t, const char *run,
                   const char *kind, const char *message, int64_t time_ms);
  int (*set_deleted)(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref, int deleted);
  int (*set_attr)(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref,
                  const char *path, const pmcp_value *value);
  int (*unset_attr)(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref,
                    const char *path);
  int (*tag)(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref, const char *tag,
             int add);
  int (*series)(pmcp_store *s, void *ctx, pmcp_tenant t, const char *run,
                const pmcp_series_spec *spec, int64_t *out);
  int (*log)(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
             const pmcp_point *points, size_t n);
  int (*log_histogram)(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                       int64_t step, int64_t time_ms, const double *edges,
                       const double *counts, size_t n_bins);
  int (*log_scatter)(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                     int64_t step, int64_t time_ms, const double *x, const double *y,
                     size_t n);
  int (*note)(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp_note_spec *spec,
              pmcp_buf *out_id, int64_t *out_version);
  int (*artifact_add)(pmcp_store *s, void *ctx, pmcp_tenant t,
                      const pmcp_artifact_spec *spec, pmcp_buf *out_id,
                      int64_t *out_version);
  int (*artifact_label)(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref,
                        int64_t version, const char *label);
  int (*artifact_promote)(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref);
  int (*artifact_content)(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref,
                          int64_t version, pmcp_buf *out, pmcp_buf *meta);
  int (*paper)(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp_paper *paper);
  int (*put)(pmcp_store *s, void *ctx, pmcp_tenant t, const char *kind, const char *json,
             size_t len, pmcp_buf *out_ref);
  int (*get)(pmcp_store *s, void *ctx, pmcp_tenant t, const char *ref, pmcp_buf *out);
  int (*list)(pmcp_store *s, void *ctx, pmcp_tenant t, const pmcp_list_opts *opts,
              pmcp_buf *out);
  int (*search)(pmcp_store *s, void *ctx, pmcp_tenant t, const char *query,
                const char *kinds, const char *after, size_t limit, pmcp_buf *out);
  int (*series_list)(pmcp_store *s, void *ctx, pmcp_tenant t, const char *run,
                     pmcp_buf *out);
  int (*points)(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series, int64_t step_from,
                int64_t step_to, int64_t after_id, pmcp_point *out, size_t cap,
                size_t *n_out, int64_t *next_id);
  int (*summary)(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series, int64_t step_from,
                 int64_t step_to, size_t n_buckets, pmcp_bucket *out, size_t *n_out);
  int (*series_sets)(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                     int64_t step_from, int64_t step_to, const char *after, size_t limit,
                     pmcp_buf *out);
  int (*summary_time)(pmcp_store *s, void *ctx, pmcp_tenant t, int64_t series,
                      int64_t time_from, int64_t time_to, size_t n_buckets, pmcp_bucket *out,
                      size_t *n_out);
} pmcp_store_ops;

/**
 * Wraps a host-supplied backend in a store handle. @p ops is copied.
 * @param flags PMCP_STORE_READONLY to refuse every write call up front.
 * @return 0; PMCP_EINVAL (NULL ops, unknown ops version); PMCP_ENOMEM.
 */
PMCP_API int pmcp_store_new_custom(pmcp_store **out, const pmcp_store_ops *ops, void *ctx,
                                   unsigned flags);

/** For backends: records the message pmcp_store_errmsg() returns and
 *  passes @p code through, so a backend can `return pmcp_store_set_error(...)`. */
PMCP_API int pmcp_store_set_error(pmcp_store *store, int code, const char *fmt, ...)
    PMCP_PRINTF(3, 4);

PMCP_END_DECLS

#endif
