/* SPDX-License-Identifier: MIT */
/* Fixtures of the Tasks extension (io.modelcontextprotocol/tasks), named
 * as the conformance suite's everything server names them: a sync tool, a
 * sleeping one that can be cancelled, a tool error, a protocol error, tools
 * that wait for elicitation inside a task, and one that gathers input first
 * and becomes a task on its last round. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "fixtures.h"

/* Sleeps @p ms in short steps; PMCP_ECANCELLED once the call is cancelled. */
static int nap(pmcp_call *call, long ms) {
  while (ms > 0) {
    if (pmcp_call_cancelled(call))
      return PMCP_ECANCELLED;
    long step = ms < 50 ? ms : 50;
    struct timespec ts = {0, step * 1000000L};
    nanosleep(&ts, NULL);
    ms -= step;
  }
  return pmcp_call_cancelled(call) ? PMCP_ECANCELLED : 0;
}

static int text(pmcp_call *call, const char *line) {
  return pmcp_result_text(call, line, strlen(line));
}

static int tool_greet(pmcp_call *call, void *ud) {
  (void)ud;
  const char *name = NULL;
  if (pmcp_arg_string(call, "name", &name, NULL) || !name)
    name = "World";
  char line[512];
  snprintf(line, sizeof line, "Hello, %s!", name);
  return text(call, line);
}

static int tool_slow(pmcp_call *call, void *ud) {
  (void)ud;
  double seconds = 0;
  if (pmcp_arg_number(call, "seconds", &seconds) || seconds < 0)
    seconds = 0;
  if (seconds > 600)
    seconds = 600;
  int rc = nap(call, (long)(seconds * 1000));
  if (rc)
    return rc;
  const char *label = NULL;
  if (pmcp_arg_string(call, "label", &label, NULL) || !label)
    label = "";
  char line[512];
  snprintf(line, sizeof line, "Computed after %g s%s%s", seconds, label[0] ? ": " : "",
           label);
  return text(call, line);
}

static int tool_failing(pmcp_call *call, void *ud) {
  (void)ud;
  int rc = nap(call, 1000);
  if (rc)
    return rc;
  rc = text(call, "{\"error\":\"job_failed\",\"message\":\"the job failed, as it always does\"}");
  pmcp_result_set_error(call, 1);
  return rc;
}

static int tool_protocol_error(pmcp_call *call, void *ud) {
  (void)ud;
  (void)call;
  return PMCP_EINTERNAL;
}

static const char CONFIRM[] =
    "{\"message\":\"Delete the file?\",\"requestedSchema\":{\"type\":\"object\","
    "\"properties\":{\"confirm\":{\"type\":\"boolean\"}},\"required\":[\"confirm\"]}}";
static const char NAME[] =
    "{\"message\":\"What is your name?\",\"requestedSchema\":{\"type\":\"object\","
    "\"properties\":{\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}}";

static int ask(pmcp_call *call, const char *key, const char *params, cJSON **out) {
  return everything_ask(call, key, "elicitation/create", params, out);
}

static int tool_confirm_delete(pmcp_call *call, void *ud) {
  (void)ud;
  cJSON *a;
  int rc = ask(call, "confirm", CONFIRM, &a);
  if (rc)
    return rc;
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(a, "content"), "confirm");
  const char *file = NULL;
  if (pmcp_arg_string(call, "filename", &file, NULL) || !file)
    file = "the file";
  char line[512];
  snprintf(line, sizeof line, cJSON_IsTrue(c) ? "Deleted %s" : "Kept %s", file);
  cJSON_Delete(a);
  return text(call, line);
}

static int tool_multi_input(pmcp_call *call, void *ud) {
  (void)ud;
  cJSON *a = NULL, *b = NULL;
  int ra = ask(call, "first", NAME, &a);
  int rb = ask(call, "second", NAME, &b);
  int rc = ra ? ra : rb;
  if (!rc) {
    char line[512];
    snprintf(line, sizeof line, "Got %s and %s", everything_form_text(a, "name"),
             everything_form_text(b, "name"));
    rc = text(call, line);
  }
  cJSON_Delete(a);
  cJSON_Delete(b);
  return rc;
}

static int tool_with_task(pmcp_call *call, void *ud) {
  (void)ud;
  cJSON *a;
  int rc = ask(call, "user_name", NAME, &a);
  if (rc)
    return rc;
  if (pmcp_call_task(call)) {
    cJSON_Delete(a);
    return 0; /* the engine answers with a task and runs this again in it */
  }
  char line[512];
  snprintf(line, sizeof line, "Hello, %s!", everything_form_text(a, "name"));
  cJSON_Delete(a);
  return text(call, line);
}

int everything_register_tasks(pmcp_server *s) {
  static const pmcp_arg_spec greet_args[] = {
      {.name = "name", .type = PMCP_T_STRING, .description = "Who to greet"}};
  static const pmcp_arg_spec slow_args[] = {
      {.name = "seconds", .type = PMCP_T_NUMBER, .description = "How long to work"},
      {.name = "label", .type = PMCP_T_STRING, .description = "A label echoed in the result"}};
  static const pmcp_arg_spec file_args[] = {
      {.name = "filename", .type = PMCP_T_STRING, .description = "The file to delete"}};
  static const struct {
    const char *name, *description;
    pmcp_tool_fn fn;
    unsigned flags;
    const pmcp_arg_spec *args;
    size_t n_args;
  } tools[] = {
      {"greet", "Greets by name (never a task)", tool_greet, 0, greet_args, 1},
      {"slow_compute", "Works for `seconds` seconds (a task when the client can)",
       tool_slow, PMCP_TOOL_BLOCKING | PMCP_TOOL_TASK, slow_args, 2},
      {"failing_job", "Fails with a tool error after a second (only as a task)",
       tool_failing, PMCP_TOOL_BLOCKING | PMCP_TOOL_TASK | PMCP_TOOL_TASK_REQUIRED, NULL, 0},
      {"protocol_error_job", "Fails with a protocol error (a task when the client can)",
       tool_protocol_error, PMCP_TOOL_BLOCKING | PMCP_TOOL_TASK, NULL, 0},
      {"confirm_delete", "Asks for a confirmation inside a task", tool_confirm_delete,
       PMCP_TOOL_BLOCKING | PMCP_TOOL_TASK, file_args, 1},
      {"multi_input", "Asks for two names at once inside a task", tool_multi_input,
       PMCP_TOOL_BLOCKING | PMCP_TOOL_TASK, NULL, 0},
      {"test_tool_with_task", "Asks the user's name, then becomes a task",
       tool_with_task, PMCP_TOOL_BLOCKING | PMCP_TOOL_TASK_REQUIRED, NULL, 0},
  };
  for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
    pmcp_tool_def def = PMCP_TOOL_DEF_INIT;
    def.name = tools[i].name;
    def.description = tools[i].description;
    def.handler = tools[i].fn;
    def.flags = tools[i].flags;
    def.args = tools[i].args;
    def.n_args = tools[i].n_args;
    int rc = pmcp_server_add_tool(s, &def);
    if (rc)
      return rc;
  }
  return 0;
}
