/* SPDX-License-Identifier: MIT */
/**
 * @file tasks.h
 * Durable tasks (io.modelcontextprotocol/tasks): the hook through which the
 * engine keeps its task records in a store the host supplies, so a task
 * survives a restart of the process and is served by every replica that
 * shares the store (and the cursor key: task ids are sealed with it).
 *
 * Without a task store the engine keeps tasks in memory (pmcp_tasks(3)).
 * With one, every change of a task is written through before the engine
 * answers, and tasks/get, tasks/update and tasks/cancel read the record
 * from the store, so whichever replica a client reaches sees the task as
 * its runner left it. pmcp_store_task_store() (store.h) makes one over a
 * SQLite or PostgreSQL store.
 *
 * A working task is run by one process, named in its record (`runner`),
 * which renews the record's lease (`lease_ms`) while the call runs. A
 * working task whose lease ran out belongs to a process that is gone (it
 * crashed or was stopped): the next reader marks it failed, with an error
 * that says so, instead of leaving it "working" for ever.
 */
#ifndef PROBEMCP_TASKS_H
#define PROBEMCP_TASKS_H

#include "common.h"
#include "error.h"
#include "server.h"

PMCP_BEGIN_DECLS

/** One task as it is stored. Strings are UTF-8, NUL-terminated; the JSON
 *  fields hold compact JSON text. Times are Unix milliseconds. */
typedef struct pmcp_task_record {
  char *id;             /**< the sealed task id (primary key) */
  char *owner;          /**< who may see it: pmcp_task_store.owner's text
                         *   for the caller that created it ("" when the
                         *   host has no identities) */
  char *status;         /**< working, input_required, completed, failed or
                         *   cancelled; the last three are final */
  char *request;        /**< the call, JSON: {"name":...,"arguments":...,
                         *   "clientCapabilities":...}; enough for any
                         *   replica to run its next round */
  char *answers;        /**< JSON object: the inputResponses given so far */
  char *input_requests; /**< JSON object of pending inputRequests, or NULL */
  char *result;         /**< the tools/call result JSON (completed), or NULL */
  char *error;          /**< the JSON-RPC error object (failed), or NULL */
  char *runner;         /**< the process running it (working), or NULL */
  long long created_ms, updated_ms;
  long long expires_ms; /**< the record may be deleted after this */
  long long lease_ms;   /**< working: the runner renews it until this */
} pmcp_task_record;

/** Frees the strings of @p rec (with free()) and zeroes it. NULL ok. */
PMCP_API void pmcp_task_record_clear(pmcp_task_record *rec);

/**
 * A host's task store. Every callback gets @c ud first and may be called
 * from any thread, concurrently (the store locks what it must). Records
 * passed in are borrowed for the call. Errors are PMCP_E* codes; the
 * engine answers the client with an internal error and keeps going.
 */
typedef struct pmcp_task_store {
  void *ud;
  /** Stores a new record. @return 0; PMCP_EEXIST; another error. */
  int (*create)(void *ud, const pmcp_task_record *rec);
  /** Overwrites the record of @c rec->id (every field but id, owner and
   *  created_ms) unless the stored one is already final: a final status
   *  never changes. @return 0 written; PMCP_ESTALE when the stored
   *  record is final; PMCP_ENOTFOUND when there is none. */
  int (*update)(void *ud, const pmcp_task_record *rec);
  /** Reads the record of @p id into @p out, its strings malloc'd (the
   *  engine frees them with pmcp_task_record_clear()). A record past its
   *  expires_ms may be reported missing. @return 0; PMCP_ENOTFOUND. */
  int (*get)(void *ud, const char *id, pmcp_task_record *out);
  /** Deletes the records whose expires_ms is before @p now_ms. Called
   *  now and then by the engine. @return 0 or an error. */
  int (*sweep)(void *ud, long long now_ms);
  /** The stable text naming the caller whose session user data is
   *  @p session_ud (an API key or OAuth connection and its tenant), the
   *  same on every replica and after a restart; at most @p size - 1 bytes.
   *  NULL: every caller is "" (a host without identities). @return 0 or
   *  an error (the call is refused). */
  int (*owner)(void *ud, const void *session_ud, char *out, size_t size);
  /** Called once when the server lets go of the store (NULL: nothing). */
  void (*release)(void *ud);
  /** How long a runner's lease lasts (0: 30000 ms); it is renewed every
   *  third of that while the call runs. */
  long long lease_ms;
} pmcp_task_store;

/**
 * Makes @p server keep its tasks in @p store (copied; @c store->ud must
 * outlive the server, or until release is called). Call before the first
 * message, like registering tools. For replicas to share tasks they must
 * also share the cursor key (pmcp_server_set_cursor_key()).
 * @return 0; PMCP_EINVAL (a callback other than owner/release missing);
 *         PMCP_EMISUSE (the server already handled a message, or already
 *         has a task store).
 */
PMCP_API int pmcp_server_set_task_store(pmcp_server *server, const pmcp_task_store *store);

PMCP_END_DECLS

#endif
