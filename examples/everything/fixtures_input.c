/* SPDX-License-Identifier: MIT */
/* Fixtures that ask the client for input (sampling, elicitation, roots)
 * through pmcp_call_input(), which works in both eras: a server-to-client
 * request in a 2025-11-25 session, an input_required round trip for a
 * 2026-07-28 request. Named as the conformance suite's everything server
 * names them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fixtures.h"

#define ASK_MS 60000

int everything_ask(pmcp_call *call, const char *key, const char *method,
                   const char *params, cJSON **out) {
  pmcp_buf b = {0};
  *out = NULL;
  int rc = pmcp_call_input(call, key, method, params, ASK_MS, &b);
  if (rc == 0 && !(*out = cJSON_ParseWithLength(b.ptr ? b.ptr : "", b.len)))
    rc = PMCP_EPARSE;
  pmcp_buf_dispose(&b);
  return rc;
}

static const char ELICIT_NAME[] =
    "{\"message\":\"What is your name?\",\"requestedSchema\":{\"type\":\"object\","
    "\"properties\":{\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}}";
static const char SAMPLE_CAPITAL[] =
    "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":"
    "\"What is the capital of France?\"}}],\"maxTokens\":100}";

const char *everything_form_text(const cJSON *answer, const char *field) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(answer, "content"), field);
  return cJSON_IsString(v) ? v->valuestring : "unknown";
}

/* content.text of a sampling answer, or "no response". */
static const char *sample_text(const cJSON *answer) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(answer, "content"), "text");
  return cJSON_IsString(v) ? v->valuestring : "no response";
}

static int root_count(const cJSON *answer) {
  return cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(answer, "roots"));
}

static int put_text(pmcp_call *call, const char *line) {
  return pmcp_result_text(call, line, strlen(line));
}

static int tool_missing_capability(pmcp_call *call, void *ud) {
  (void)ud;
  cJSON *a;
  int rc = everything_ask(call, "sample", "sampling/createMessage", SAMPLE_CAPITAL, &a);
  if (rc)
    return rc;
  cJSON_Delete(a);
  return pmcp_result_text(call, "Success", 7);
}

static int tool_elicit(pmcp_call *call, void *ud) {
  (void)ud;
  cJSON *a;
  int rc = everything_ask(call, "user_name", "elicitation/create", ELICIT_NAME, &a);
  if (rc)
    return rc;
  char line[512];
  snprintf(line, sizeof line, "Hello, %s!", everything_form_text(a, "name"));
  rc = put_text(call, line);
  cJSON_Delete(a);
  return rc;
}

static int tool_sample(pmcp_call *call, void *ud) {
  (void)ud;
  cJSON *a;
  int rc = everything_ask(call, "sample_request", "sampling/createMessage", SAMPLE_CAPITAL, &a);
  if (rc)
    return rc;
  char line[512];
  snprintf(line, sizeof line, "Sampling result: %s", sample_text(a));
  rc = put_text(call, line);
  cJSON_Delete(a);
  return rc;
}

static int tool_roots(pmcp_call *call, void *ud) {
  (void)ud;
  cJSON *a;
  int rc = everything_ask(call, "roots_request", "roots/list", "{}", &a);
  if (rc)
    return rc;
  char line[64];
  snprintf(line, sizeof line, "Found %d root(s)", root_count(a));
  rc = put_text(call, line);
  cJSON_Delete(a);
  return rc;
}

static int tool_request_state(pmcp_call *call, void *ud) {
  (void)ud;
  cJSON *a;
  int rc = everything_ask(call, "confirm", "elicitation/create",
               "{\"message\":\"Please confirm\",\"requestedSchema\":{\"type\":\"object\","
               "\"properties\":{\"ok\":{\"type\":\"boolean\"}},\"required\":[\"ok\"]}}",
               &a);
  if (rc)
    return rc;
  const cJSON *ok = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(a, "content"), "ok");
  rc = cJSON_IsTrue(ok)
           ? pmcp_result_text(call, "state-ok: requestState validated", 32)
           : pmcp_result_errorf(call, "not confirmed");
  cJSON_Delete(a);
  return rc;
}

static int tool_multiple(pmcp_call *call, void *ud) {
  (void)ud;
  /* Ask for all three at once: each missing one joins inputRequests. */
  cJSON *name = NULL, *greet = NULL, *roots = NULL;
  int r1 = everything_ask(call, "user_name", "elicitation/create", ELICIT_NAME, &name);
  int r2 = everything_ask(call, "greeting", "sampling/createMessage",
               "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\","
               "\"text\":\"Generate a greeting\"}}],\"maxTokens\":50}",
               &greet);
  int r3 = everything_ask(call, "client_roots", "roots/list", "{}", &roots);
  int rc = r1 ? r1 : r2 ? r2 : r3;
  if (!rc) {
    char line[512];
    snprintf(line, sizeof line, "Name: %s; Greeting: %s; Roots: %d",
             everything_form_text(name, "name"), sample_text(greet), root_count(roots));
    rc = put_text(call, line);
  }
  cJSON_Delete(name);
  cJSON_Delete(greet);
  cJSON_Delete(roots);
  return rc;
}

static int tool_multi_round(pmcp_call *call, void *ud) {
  (void)ud;
  cJSON *a, *b;
  int rc = everything_ask(call, "step1", "elicitation/create",
               "{\"message\":\"Step 1: What is your name?\",\"requestedSchema\":"
               "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},"
               "\"required\":[\"name\"]}}",
               &a);
  if (rc)
    return rc;
  rc = everything_ask(call, "step2", "elicitation/create",
           "{\"message\":\"Step 2: What is your favorite color?\",\"requestedSchema\":"
           "{\"type\":\"object\",\"properties\":{\"color\":{\"type\":\"string\"}},"
           "\"required\":[\"color\"]}}",
           &b);
  if (!rc) {
    char line[512];
    snprintf(line, sizeof line, "Name: %s; Color: %s", everything_form_text(a, "name"),
             everything_form_text(b, "color"));
    rc = put_text(call, line);
    cJSON_Delete(b);
  }
  cJSON_Delete(a);
  return rc;
}

/* Asks only for what the client declared. */
static int tool_capabilities(pmcp_call *call, void *ud) {
  (void)ud;
  cJSON *a = NULL, *b = NULL;
  int r1 = 0, r2 = 0;
  if (pmcp_call_client_has(call, "elicitation"))
    r1 = everything_ask(call, "user_input", "elicitation/create", ELICIT_NAME, &a);
  if (pmcp_call_client_has(call, "sampling"))
    r2 = everything_ask(call, "sample_request", "sampling/createMessage", SAMPLE_CAPITAL, &b);
  int rc = r1 ? r1 : r2;
  if (!rc)
    rc = pmcp_result_text(call, "capabilities respected", 22);
  cJSON_Delete(a);
  cJSON_Delete(b);
  return rc;
}

static int tool_logging(pmcp_call *call, void *ud) {
  (void)ud;
  /* Sent only when the request carried a log level. */
  pmcp_call_log(call, PMCP_LOG_INFO, "test_logging_tool", "\"diagnostic log line\"");
  return pmcp_result_text(call, "logged", 6);
}

/* Diagnostic hooks of the subscriptions/listen checks: announce a change
 * of the tool or prompt list to every listener that asked for it. */
static int tool_trigger_tools(pmcp_call *call, void *ud) {
  (void)ud;
  int rc = pmcp_server_notify_list_changed(pmcp_call_server(call), PMCP_LIST_TOOLS);
  return rc ? rc : pmcp_result_text(call, "tools list change announced", 27);
}

static int tool_trigger_prompts(pmcp_call *call, void *ud) {
  (void)ud;
  int rc = pmcp_server_notify_list_changed(pmcp_call_server(call), PMCP_LIST_PROMPTS);
  return rc ? rc : pmcp_result_text(call, "prompts list change announced", 29);
}

/* A parameter that travels in a header too (Mcp-Param-Region, SEP-2243);
 * the engine checks it against the body before the handler runs. */
static const char HEADER_PARAM_SCHEMA[] =
    "{\"type\":\"object\",\"properties\":{\"region\":{\"type\":\"string\","
    "\"description\":\"Where to run\",\"x-mcp-header\":\"Region\"}},"
    "\"required\":[\"region\"]}";

static int tool_header_param(pmcp_call *call, void *ud) {
  (void)ud;
  const char *region;
  int rc = pmcp_arg_string(call, "region", &region, NULL);
  if (rc)
    return rc;
  char line[300];
  snprintf(line, sizeof line, "region: %s", region);
  return put_text(call, line);
}

static int prompt_input(pmcp_call *call, void *ud) {
  (void)ud;
  cJSON *a;
  int rc = everything_ask(call, "user_context", "elicitation/create",
               "{\"message\":\"What context should the prompt use?\",\"requestedSchema\":"
               "{\"type\":\"object\",\"properties\":{\"context\":{\"type\":\"string\"}},"
               "\"required\":[\"context\"]}}",
               &a);
  if (rc)
    return rc;
  char line[512];
  snprintf(line, sizeof line, "Prompt with context: %s", everything_form_text(a, "context"));
  cJSON_Delete(a);
  return pmcp_prompt_text(call, "user", line);
}

int everything_register_input(pmcp_server *s) {
  static const struct {
    const char *name, *description;
    pmcp_tool_fn fn;
  } tools[] = {
      {"test_missing_capability", "Needs the client's sampling capability",
       tool_missing_capability},
      {"test_input_required_result_elicitation", "Asks the user's name (elicitation)",
       tool_elicit},
      {"test_input_required_result_sampling", "Asks the client's LLM (sampling)",
       tool_sample},
      {"test_input_required_result_list_roots", "Asks for the client's roots",
       tool_roots},
      {"test_input_required_result_request_state",
       "Asks for a confirmation; the answer comes back with the sealed state",
       tool_request_state},
      {"test_input_required_result_multiple_inputs",
       "Asks for a name, a greeting and the roots at once", tool_multiple},
      {"test_input_required_result_multi_round", "Asks in two rounds",
       tool_multi_round},
      {"test_input_required_result_tampered_state",
       "Asks for a name; a tampered requestState is refused", tool_elicit},
      {"test_input_required_result_capabilities",
       "Asks only for what the client declared", tool_capabilities},
      {"test_streaming_elicitation", "Asks the user's name (elicitation)",
       tool_elicit},
      {"test_logging_tool", "Logs one line when the request asked for logs",
       tool_logging},
      {"test_trigger_tool_change", "Announces a change of the tool list",
       tool_trigger_tools},
      {"test_trigger_prompt_change", "Announces a change of the prompt list",
       tool_trigger_prompts},
  };
  for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
    pmcp_tool_def def = PMCP_TOOL_DEF_INIT;
    def.name = tools[i].name;
    def.description = tools[i].description;
    def.handler = tools[i].fn;
    /* Blocking: in a 2025-11-25 session the input is a request the
     * handler waits for. */
    def.flags = PMCP_TOOL_BLOCKING;
    int rc = pmcp_server_add_tool(s, &def);
    if (rc)
      return rc;
  }
  pmcp_tool_def def = PMCP_TOOL_DEF_INIT;
  def.name = "test_header_param";
  def.description = "Echoes its region, which also travels as Mcp-Param-Region";
  def.input_schema_json = HEADER_PARAM_SCHEMA;
  def.handler = tool_header_param;
  int rc = pmcp_server_add_tool(s, &def);
  if (rc)
    return rc;
  pmcp_prompt_def p = PMCP_PROMPT_DEF_INIT;
  p.name = "test_input_required_result_prompt";
  p.description = "A prompt that asks the user for context";
  p.get = prompt_input;
  return pmcp_server_add_prompt(s, &p);
}
