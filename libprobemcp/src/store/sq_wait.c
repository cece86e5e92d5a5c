/* SPDX-License-Identifier: MIT */
/* SQLite backend: writers waiting for each other. One writer at a time
 * holds a SQLite store; the others wait for as long as it takes (or
 * $PROBE_STORE_WAIT seconds), saying on stderr who holds the store and
 * since when. The holder of a long write (an explicit transaction: an
 * import) leaves its pid, start time and command in PATH-writer beside the
 * store; the file is advisory only (SQLite's locks decide), and one whose
 * process is gone is ignored. */
#define _GNU_SOURCE /* program_invocation_short_name */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/sq.h"
#include "util/cnum.h"

#define FIRST_SAY_MS 2000   /* quiet for short waits */
#define SAY_EVERY_MS 10000

void pmcp__sq_wait_init(pmcp__sq *q, const char *path)
{
  q->wait_ms = -1;
  const char *w = getenv("PROBE_STORE_WAIT");
  if (w && *w) {
    char *end;
    double secs = pmcp__c_strtod(w, &end);
    if (end != w && !*end && secs >= 0)
      q->wait_ms = (int64_t)(secs * 1000.0);
  }
  if (q->readonly && (q->wait_ms < 0 || q->wait_ms > PMCP__SQ_READER_WAIT_MS))
    q->wait_ms = PMCP__SQ_READER_WAIT_MS; /* readers only meet brief locks */
  size_t n = strlen(path);
  q->holder_path = malloc(n + sizeof "-writer");
  if (q->holder_path)
    memcpy(q->holder_path, path, n), memcpy(q->holder_path + n, "-writer", sizeof "-writer");
  sqlite3_busy_handler(q->db, pmcp__sq_on_busy, q);
}

/* Our command line, NULs as spaces, for the holder file. */
static void own_command(char *out, size_t size)
{
  out[0] = '\0';
  FILE *f = fopen("/proc/self/cmdline", "rb");
  if (!f)
    return;
  size_t n = fread(out, 1, size - 1, f);
  fclose(f);
  out[n] = '\0';
  for (size_t i = 0; i < n; i++)
    if (out[i] == '\0' || out[i] == '\n' || out[i] == '\t')
      out[i] = ' ';
  while (n && out[n - 1] == ' ')
    out[--n] = '\0';
}

void pmcp__sq_holder_take(pmcp__sq *q)
{
  if (q->holding || !q->holder_path || q->readonly)
    return;
  char cmd[200];
  own_command(cmd, sizeof cmd);
  FILE *f = fopen(q->holder_path, "w");
  if (!f)
    return; /* advisory: waiters then only say the store is held */
  fprintf(f, "%ld\t%lld\t%s\n", (long)getpid(), (long long)pmcp__now_ms(), cmd);
  q->holding = fclose(f) == 0;
}

void pmcp__sq_holder_drop(pmcp__sq *q)
{
  if (!q->holding)
    return;
  q->holding = 0;
  unlink(q->holder_path);
}

int pmcp__sq_holder_describe(const pmcp__sq *q, char *out, size_t size)
{
  out[0] = '\0';
  if (!q->holder_path)
    return -1;
  FILE *f = fopen(q->holder_path, "r");
  if (!f)
    return -1;
  char line[300];
  int ok = fgets(line, sizeof line, f) != NULL;
  fclose(f);
  long pid = 0;
  long long since = 0;
  int used = 0;
  if (!ok || sscanf(line, "%ld\t%lld\t%n", &pid, &since, &used) < 2 || pid <= 0)
    return -1;
  if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
    return -1; /* left behind by a process that is gone */
  char *cmd = line + used;
  cmd[strcspn(cmd, "\n")] = '\0';
  time_t t = (time_t)(since / 1000);
  struct tm tm;
  char when[32] = "?";
  if (gmtime_r(&t, &tm))
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
  snprintf(out, size, "pid %ld%s%s%s has been writing since %s", pid, *cmd ? " (" : "",
           cmd, *cmd ? ")" : "", when);
  return 0;
}

int pmcp__sq_on_busy(void *ud, int count)
{
  pmcp__sq *q = ud;
  int64_t now = pmcp__now_ms();
  if (count == 0) {
    q->wait_start = now;
    q->wait_said = now + FIRST_SAY_MS;
  }
  int64_t waited = now - q->wait_start;
  if (q->wait_ms >= 0 && waited >= q->wait_ms)
    return 0; /* SQLITE_BUSY: the caller says the store is busy */
  if (!q->readonly && now >= q->wait_said) {
    char who[280];
    if (pmcp__sq_holder_describe(q, who, sizeof who) != 0)
      snprintf(who, sizeof who, "another process is writing to it");
    const char *file = sqlite3_db_filename(q->db, "main");
    fprintf(stderr, "%s: waiting for the store %s: %s; waited %lld s so far%s\n",
            program_invocation_short_name, file ? file : "", who, (long long)(waited / 1000),
            q->wait_ms >= 0 ? "" : " (PROBE_STORE_WAIT or probe --wait sets a limit)");
    fflush(stderr);
    q->wait_said = now + SAY_EVERY_MS;
  }
  /* Short sleeps first (most locks are brief), then 50 ms. */
  unsigned ms = count < 10 ? 1u + (unsigned)count : 50u;
  struct timespec ts = {0, (long)ms * 1000000L};
  nanosleep(&ts, NULL);
  return 1;
}
