/* SPDX-License-Identifier: MIT */
/*
 * The conformance fixtures. Names, texts, MIME types and schemas follow the
 * server scenarios of @modelcontextprotocol/conformance 0.1.16 (the version
 * tests/conformance pins); where a scenario only checks the shape (the image
 * bytes, the confirmation texts) we use our own data.
 */
#include "fixtures.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A 1x1 red PNG and a 4-sample silent 8 kHz mono 16-bit WAV, generated for
 * this project (any valid image/audio satisfies the suite). */
static const char IMAGE_PNG_B64[] =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3"
    "A0FDAAAAAElFTkSuQmCC";
static const char AUDIO_WAV_B64[] =
    "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQgAAAAAAAAAAAAAAA==";

#define WATCHED_URI "test://watched-resource"
#define TEMPLATE_URI "test://template/{id}/data"

/* The one piece of mutable fixture state: the watched resource's text,
 * replaced by test_watched_resource_update while other threads read it. */
typedef struct watched {
  pthread_mutex_t lock;
  char *text;
} watched;

static void watched_free(void *ud) {
  watched *w = ud;
  if (!w)
    return;
  pthread_mutex_destroy(&w->lock);
  free(w->text);
  free(w);
}

/* Sleeps @p ms in small steps so a cancellation is seen promptly.
 * @return 0, or PMCP_ECANCELLED once the client cancelled. */
static int sleep_ms(pmcp_call *call, long ms) {
  while (ms > 0) {
    if (pmcp_call_cancelled(call))
      return PMCP_ECANCELLED;
    long step = ms < 10 ? ms : 10;
    struct timespec ts = {0, step * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
      ;
    ms -= step;
  }
  return pmcp_call_cancelled(call) ? PMCP_ECANCELLED : 0;
}

static int text_result(pmcp_call *call, const char *text) {
  return pmcp_result_text(call, text, strlen(text));
}

/* ---- Content tools -------------------------------------------------------- */

static int tool_simple_text(pmcp_call *call, void *ud) {
  (void)ud;
  return text_result(call, "This is a simple text response for testing.");
}

static int tool_image(pmcp_call *call, void *ud) {
  (void)ud;
  return pmcp_result_image(call, IMAGE_PNG_B64, "image/png");
}

static int tool_audio(pmcp_call *call, void *ud) {
  (void)ud;
  return pmcp_result_audio(call, AUDIO_WAV_B64, "audio/wav");
}

static int tool_embedded_resource(pmcp_call *call, void *ud) {
  (void)ud;
  return pmcp_result_resource_text(call, "test://embedded-resource", "text/plain",
                                   "This is an embedded resource content.");
}

static int tool_multiple_content(pmcp_call *call, void *ud) {
  (void)ud;
  int rc = text_result(call, "Multiple content types test:");
  if (rc == 0)
    rc = pmcp_result_image(call, IMAGE_PNG_B64, "image/png");
  if (rc == 0)
    rc = pmcp_result_resource_text(call, "test://mixed-content-resource",
                                   "application/json",
                                   "{\"test\":\"data\",\"value\":123}");
  return rc;
}

static int tool_error(pmcp_call *call, void *ud) {
  (void)ud;
  return pmcp_result_errorf(call, "%s",
                            "This tool intentionally returns an error for testing");
}

/* ---- Tools that talk while they run --------------------------------------- */

static int tool_logging(pmcp_call *call, void *ud) {
  (void)ud;
  static const char *const steps[] = {"\"Tool execution started\"",
                                      "\"Tool processing data\"",
                                      "\"Tool execution completed\""};
  for (size_t i = 0; i < 3; i++) {
    if (i > 0) {
      int rc = sleep_ms(call, 50);
      if (rc)
        return rc;
    }
    int rc = pmcp_call_log(call, PMCP_LOG_INFO, "everything", steps[i]);
    if (rc)
      return rc;
  }
  return text_result(call, "Tool with logging executed successfully");
}

static int tool_progress(pmcp_call *call, void *ud) {
  (void)ud;
  for (int p = 0; p <= 100; p += 50) {
    if (p > 0) {
      int rc = sleep_ms(call, 50);
      if (rc)
        return rc;
    }
    char msg[64];
    snprintf(msg, sizeof msg, "Completed step %d of 100", p);
    int rc = pmcp_call_progress(call, p, 100, msg);
    if (rc)
      return rc;
  }
  /* The TypeScript SDK client runs notification handlers a microtask late
   * but settles a response at once, dropping the progress handler: a last
   * progress that reaches it in the same read as the response is lost.
   * A short pause keeps them in separate reads. */
  int rc = sleep_ms(call, 10);
  if (rc)
    return rc;
  return text_result(call, "Tool with progress executed successfully");
}

/* SEP-1699: asks the transport to close the call's SSE stream (stdio
 * ignores it), then answers after the client had time to reconnect with
 * Last-Event-ID. */
static int tool_reconnection(pmcp_call *call, void *ud) {
  (void)ud;
  int rc = pmcp_call_close_stream(call);
  if (rc)
    return rc;
  rc = sleep_ms(call, 100);
  if (rc)
    return rc;
  return text_result(call, "Reconnection test completed successfully. If you "
                           "received this, the client properly reconnected "
                           "after stream closure.");
}

/* ---- Server-to-client requests ------------------------------------------- */

/* Sends @p params (consumed) as @p method and parses the client's answer.
 * On failure the call gets an isError result naming the problem and NULL is
 * returned with *rc set (0 for a tool-level failure, else a protocol one). */
static cJSON *client_request(pmcp_call *call, const char *method, cJSON *params,
                             int *rc) {
  char *text = cJSON_PrintUnformatted(params);
  cJSON_Delete(params);
  if (!text) {
    *rc = PMCP_ENOMEM;
    return NULL;
  }
  pmcp_buf out = PMCP_BUF_INIT;
  int r = pmcp_call_request(call, method, text, 60000, &out);
  cJSON_free(text);
  *rc = 0;
  if (r == PMCP_ECANCELLED) {
    pmcp_buf_dispose(&out);
    *rc = r;
    return NULL;
  }
  if (r != 0) {
    pmcp_result_errorf(call, "%s failed: %s%s%s", method, pmcp_strerror(r),
                       out.len ? ": " : "", out.len ? out.ptr : "");
    pmcp_buf_dispose(&out);
    return NULL;
  }
  cJSON *res = cJSON_ParseWithLength(out.ptr, out.len);
  pmcp_buf_dispose(&out);
  if (!cJSON_IsObject(res)) {
    cJSON_Delete(res);
    pmcp_result_errorf(call, "%s: the client's result is not a JSON object",
                       method);
    return NULL;
  }
  return res;
}

/* The text of a sampling result: content is one block or (2025-11-25) an
 * array of blocks; we take the first text block. */
static const char *sampling_text(const cJSON *res) {
  const cJSON *content = cJSON_GetObjectItemCaseSensitive(res, "content");
  if (cJSON_IsArray(content)) {
    const cJSON *item;
    cJSON_ArrayForEach(item, content) {
      const cJSON *t = cJSON_GetObjectItemCaseSensitive(item, "text");
      if (cJSON_IsString(t))
        return t->valuestring;
    }
    return NULL;
  }
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(content, "text");
  return cJSON_IsString(t) ? t->valuestring : NULL;
}

static int tool_sampling(pmcp_call *call, void *ud) {
  (void)ud;
  if (!pmcp_call_client_has(call, "sampling"))
    return pmcp_result_errorf(call, "The client does not support sampling "
                                    "(no \"sampling\" capability)");
  const char *prompt;
  int rc = pmcp_arg_string(call, "prompt", &prompt, NULL);
  if (rc)
    return rc;
  cJSON *params = cJSON_CreateObject();
  cJSON *messages = cJSON_AddArrayToObject(params, "messages");
  cJSON *msg = cJSON_CreateObject();
  cJSON_AddItemToArray(messages, msg);
  cJSON_AddStringToObject(msg, "role", "user");
  cJSON *content = cJSON_AddObjectToObject(msg, "content");
  cJSON_AddStringToObject(content, "type", "text");
  cJSON_AddStringToObject(content, "text", prompt);
  cJSON_AddNumberToObject(params, "maxTokens", 100);
  cJSON *res = client_request(call, "sampling/createMessage", params, &rc);
  if (!res)
    return rc;
  const char *text = sampling_text(res);
  if (text) {
    size_t n = strlen(text) + 32;
    char *line = malloc(n);
    if (!line) {
      cJSON_Delete(res);
      return PMCP_ENOMEM;
    }
    snprintf(line, n, "LLM response: %s", text);
    rc = text_result(call, line);
    free(line);
  } else {
    rc = pmcp_result_errorf(call, "The sampling result has no text content");
  }
  cJSON_Delete(res);
  return rc;
}

/* elicitation/create params. From 2025-11-25 on a form request says so with
 * "mode": "form"; earlier protocol versions have no such field. */
static cJSON *elicit_params(pmcp_call *call, const char *message, cJSON *schema) {
  cJSON *params = cJSON_CreateObject();
  char proto[32] = "";
  pmcp_server_session_protocol(pmcp_call_server(call), pmcp_call_session(call),
                               proto, sizeof proto);
  if (strcmp(proto, "2025-11-25") >= 0)
    cJSON_AddStringToObject(params, "mode", "form");
  cJSON_AddStringToObject(params, "message", message);
  cJSON_AddItemToObject(params, "requestedSchema", schema);
  return params;
}

/* Runs an elicitation and reports "<prefix>action=..., content={...}". */
static int elicit_and_report(pmcp_call *call, const char *message,
                             const char *schema_json, const char *prefix) {
  if (!pmcp_call_client_has(call, "elicitation"))
    return pmcp_result_errorf(call, "The client does not support elicitation "
                                    "(no \"elicitation\" capability)");
  cJSON *schema = cJSON_Parse(schema_json);
  if (!schema)
    return PMCP_ENOMEM;
  int rc;
  cJSON *res = client_request(call, "elicitation/create",
                              elicit_params(call, message, schema), &rc);
  if (!res)
    return rc;
  const cJSON *action = cJSON_GetObjectItemCaseSensitive(res, "action");
  const cJSON *content = cJSON_GetObjectItemCaseSensitive(res, "content");
  char *content_text = content ? cJSON_PrintUnformatted(content) : NULL;
  if (!cJSON_IsString(action)) {
    rc = pmcp_result_errorf(call, "The elicitation result has no action");
  } else {
    size_t n = strlen(prefix) + strlen(action->valuestring) +
               (content_text ? strlen(content_text) : 2) + 32;
    char *line = malloc(n);
    if (!line) {
      rc = PMCP_ENOMEM;
    } else {
      snprintf(line, n, "%saction=%s, content=%s", prefix, action->valuestring,
               content_text ? content_text : "{}");
      rc = text_result(call, line);
      free(line);
    }
  }
  cJSON_free(content_text);
  cJSON_Delete(res);
  return rc;
}

static int tool_elicitation(pmcp_call *call, void *ud) {
  (void)ud;
  const char *message;
  int rc = pmcp_arg_string(call, "message", &message, NULL);
  if (rc)
    return rc;
  return elicit_and_report(
      call, message,
      "{\"type\":\"object\",\"properties\":{"
      "\"username\":{\"type\":\"string\",\"description\":\"User's response\"},"
      "\"email\":{\"type\":\"string\",\"description\":\"User's email address\"}},"
      "\"required\":[\"username\",\"email\"]}",
      "User response: ");
}

static int tool_elicitation_defaults(pmcp_call *call, void *ud) {
  (void)ud;
  return elicit_and_report(
      call, "Please review and update the form fields with defaults",
      "{\"type\":\"object\",\"properties\":{"
      "\"name\":{\"type\":\"string\",\"description\":\"User name\","
      "\"default\":\"John Doe\"},"
      "\"age\":{\"type\":\"integer\",\"description\":\"User age\",\"default\":30},"
      "\"score\":{\"type\":\"number\",\"description\":\"User score\","
      "\"default\":95.5},"
      "\"status\":{\"type\":\"string\",\"description\":\"User status\","
      "\"enum\":[\"active\",\"inactive\",\"pending\"],\"default\":\"active\"},"
      "\"verified\":{\"type\":\"boolean\",\"description\":\"Verification status\","
      "\"default\":true}},\"required\":[]}",
      "Elicitation completed: ");
}

static int tool_elicitation_enums(pmcp_call *call, void *ud) {
  (void)ud;
  return elicit_and_report(
      call, "Please select options from the enum fields",
      "{\"type\":\"object\",\"properties\":{"
      "\"untitledSingle\":{\"type\":\"string\",\"description\":\"Pick one\","
      "\"enum\":[\"option1\",\"option2\",\"option3\"]},"
      "\"titledSingle\":{\"type\":\"string\",\"description\":\"Pick one\","
      "\"oneOf\":[{\"const\":\"value1\",\"title\":\"First Option\"},"
      "{\"const\":\"value2\",\"title\":\"Second Option\"},"
      "{\"const\":\"value3\",\"title\":\"Third Option\"}]},"
      "\"legacyEnum\":{\"type\":\"string\",\"description\":\"Pick one\","
      "\"enum\":[\"opt1\",\"opt2\",\"opt3\"],"
      "\"enumNames\":[\"Option One\",\"Option Two\",\"Option Three\"]},"
      "\"untitledMulti\":{\"type\":\"array\",\"description\":\"Pick some\","
      "\"items\":{\"type\":\"string\",\"enum\":[\"option1\",\"option2\","
      "\"option3\"]}},"
      "\"titledMulti\":{\"type\":\"array\",\"description\":\"Pick some\","
      "\"items\":{\"anyOf\":[{\"const\":\"value1\",\"title\":\"First Choice\"},"
      "{\"const\":\"value2\",\"title\":\"Second Choice\"},"
      "{\"const\":\"value3\",\"title\":\"Third Choice\"}]}}},"
      "\"required\":[]}",
      "Elicitation completed: ");
}

/* SEP-1613: a literal JSON Schema 2020-12 input schema, which the engine must
 * keep exactly as written ($schema, $defs, $ref, additionalProperties). */
static const char JSON_SCHEMA_2020_12[] =
    "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","
    "\"type\":\"object\","
    "\"$defs\":{\"address\":{\"$anchor\":\"addressDef\",\"type\":\"object\","
    "\"properties\":{\"street\":{\"type\":\"string\"},\"city\":{\"type\":\"string\"}}}},"
    "\"properties\":{\"name\":{\"type\":\"string\"},"
    "\"address\":{\"$ref\":\"#/$defs/address\"},"
    "\"contactMethod\":{\"type\":\"string\",\"enum\":[\"phone\",\"email\"]},"
    "\"phone\":{\"type\":\"string\"},\"email\":{\"type\":\"string\"}},"
    "\"allOf\":[{\"anyOf\":[{\"required\":[\"phone\"]},{\"required\":[\"email\"]}]}],"
    "\"if\":{\"properties\":{\"contactMethod\":{\"const\":\"phone\"}},"
    "\"required\":[\"contactMethod\"]},"
    "\"then\":{\"required\":[\"phone\"]},\"else\":{\"required\":[\"email\"]},"
    "\"additionalProperties\":false}";

static int tool_json_schema(pmcp_call *call, void *ud) {
  (void)ud;
  const char *args;
  int rc = pmcp_arg_json(call, NULL, &args);
  if (rc)
    return rc;
  size_t n = strlen(args) + 32;
  char *line = malloc(n);
  if (!line)
    return PMCP_ENOMEM;
  snprintf(line, n, "Received arguments: %s", args);
  rc = text_result(call, line);
  free(line);
  return rc;
}

/* ---- Tools for the integration tests and the benchmark ------------------- */

/* The benchmark's tool: as cheap as a tool can be, so the figures measure
 * the engine and the transport. */
static int tool_echo(pmcp_call *call, void *ud) {
  (void)ud;
  const char *text;
  size_t len;
  int rc = pmcp_arg_string(call, "text", &text, &len);
  if (rc)
    return rc;
  return pmcp_result_text(call, text, len);
}

static int tool_sleep(pmcp_call *call, void *ud) {
  (void)ud;
  int64_t ms;
  int rc = pmcp_arg_int(call, "ms", &ms);
  if (rc)
    return rc;
  rc = sleep_ms(call, (long)ms);
  if (rc)
    return rc;
  char line[64];
  snprintf(line, sizeof line, "slept %lld ms", (long long)ms);
  return text_result(call, line);
}

static int tool_watched_update(pmcp_call *call, void *ud) {
  watched *w = ud;
  const char *text;
  int rc = pmcp_arg_string(call, "content", &text, NULL);
  if (rc)
    return rc;
  char *copy = strdup(text);
  if (!copy)
    return PMCP_ENOMEM;
  pthread_mutex_lock(&w->lock);
  free(w->text);
  w->text = copy;
  pthread_mutex_unlock(&w->lock);
  rc = pmcp_server_notify_resource_updated(pmcp_call_server(call), WATCHED_URI);
  if (rc)
    return rc;
  return text_result(call, "Updated " WATCHED_URI);
}

/* Modes, typed arguments, annotations and structured output in one tool. */
static int tool_calculate(pmcp_call *call, void *ud) {
  (void)ud;
  const char *mode = pmcp_call_mode(call);
  double value;
  int rc;
  if (strcmp(mode, "add") == 0) {
    double a, b;
    if ((rc = pmcp_arg_number(call, "a", &a)) ||
        (rc = pmcp_arg_number(call, "b", &b)))
      return rc;
    value = a + b;
  } else if (strcmp(mode, "negate") == 0) {
    if ((rc = pmcp_arg_number(call, "x", &value)))
      return rc;
    value = -value;
  } else {
    return pmcp_result_errorf(call, "unknown mode \"%s\"", mode);
  }
  char json[64];
  int n = snprintf(json, sizeof json, "{\"value\":%.17g}", value);
  if ((rc = pmcp_result_text(call, json, (size_t)n)))
    return rc;
  return pmcp_result_structured(call, json, (size_t)n);
}

/* ---- Resources ----------------------------------------------------------- */

static int read_static_text(pmcp_call *call, void *ud) {
  (void)ud;
  return pmcp_result_resource_text(call, pmcp_call_uri(call), "text/plain",
                                   "This is the content of the static text resource.");
}

static int read_static_binary(pmcp_call *call, void *ud) {
  (void)ud;
  return pmcp_result_resource_blob(call, pmcp_call_uri(call), "image/png",
                                   IMAGE_PNG_B64);
}

static int read_watched(pmcp_call *call, void *ud) {
  watched *w = ud;
  pthread_mutex_lock(&w->lock);
  int rc = pmcp_result_resource_text(call, pmcp_call_uri(call), "text/plain",
                                     w->text);
  pthread_mutex_unlock(&w->lock);
  return rc;
}

static int read_template(pmcp_call *call, void *ud) {
  (void)ud;
  const char *id = pmcp_call_uri_var(call, "id");
  if (!id || !*id)
    return PMCP_ENOTFOUND;
  cJSON *obj = cJSON_CreateObject();
  char data[256];
  snprintf(data, sizeof data, "Data for ID: %s", id);
  cJSON_AddStringToObject(obj, "id", id);
  cJSON_AddBoolToObject(obj, "templateTest", 1);
  cJSON_AddStringToObject(obj, "data", data);
  char *text = cJSON_PrintUnformatted(obj);
  cJSON_Delete(obj);
  if (!text)
    return PMCP_ENOMEM;
  int rc = pmcp_result_resource_text(call, pmcp_call_uri(call),
                                     "application/json", text);
  cJSON_free(text);
  return rc;
}

/* ---- Prompts ------------------------------------------------------------- */

static int prompt_simple(pmcp_call *call, void *ud) {
  (void)ud;
  return pmcp_prompt_text(call, "user", "This is a simple prompt for testing.");
}

static int prompt_with_args(pmcp_call *call, void *ud) {
  (void)ud;
  const char *a1, *a2;
  int rc;
  if ((rc = pmcp_arg_string(call, "arg1", &a1, NULL)) ||
      (rc = pmcp_arg_string(call, "arg2", &a2, NULL)))
    return rc == PMCP_ENOTFOUND ? PMCP_EINVAL : rc;
  size_t n = strlen(a1) + strlen(a2) + 64;
  char *text = malloc(n);
  if (!text)
    return PMCP_ENOMEM;
  snprintf(text, n, "Prompt with arguments: arg1='%s', arg2='%s'", a1, a2);
  rc = pmcp_prompt_text(call, "user", text);
  free(text);
  return rc;
}

static int prompt_embedded_resource(pmcp_call *call, void *ud) {
  (void)ud;
  const char *uri;
  int rc = pmcp_arg_string(call, "resourceUri", &uri, NULL);
  if (rc)
    return rc == PMCP_ENOTFOUND ? PMCP_EINVAL : rc;
  rc = pmcp_prompt_resource(call, "user", uri, "text/plain",
                            "Embedded resource content for testing.");
  if (rc == 0)
    rc = pmcp_prompt_text(call, "user", "Please process the embedded resource above.");
  return rc;
}

static int prompt_image(pmcp_call *call, void *ud) {
  (void)ud;
  int rc = pmcp_prompt_image(call, "user", IMAGE_PNG_B64, "image/png");
  if (rc == 0)
    rc = pmcp_prompt_text(call, "user", "Please analyze the image above.");
  return rc;
}

/* ---- Completion ---------------------------------------------------------- */

static int complete(pmcp_call *call, const char *ref_type, const char *ref_name,
                    const char *arg_name, const char *value, void *ud) {
  (void)ud;
  static const char *const prompt_values[] = {
      "hello", "help", "world", "wonder", "testValue1", "testValue2", NULL};
  static const char *const id_values[] = {"1", "2", "3", "42", "123", NULL};
  const char *const *cands = NULL;
  if (strcmp(ref_type, "ref/prompt") == 0 &&
      strcmp(ref_name, "test_prompt_with_arguments") == 0 &&
      (strcmp(arg_name, "arg1") == 0 || strcmp(arg_name, "arg2") == 0))
    cands = prompt_values;
  else if (strcmp(ref_type, "ref/resource") == 0 &&
           strcmp(ref_name, TEMPLATE_URI) == 0 && strcmp(arg_name, "id") == 0)
    cands = id_values;
  if (!cands)
    return 0; /* nothing to suggest: an empty list */
  size_t plen = value ? strlen(value) : 0;
  int64_t total = 0;
  for (size_t i = 0; cands[i]; i++) {
    if (plen == 0 || strncmp(cands[i], value, plen) == 0) {
      int rc = pmcp_complete_value(call, cands[i]);
      if (rc)
        return rc;
      total++;
    }
  }
  pmcp_complete_total(call, total, 0);
  return 0;
}

/* ---- Registration -------------------------------------------------------- */

typedef struct simple_tool {
  const char *name;
  const char *description;
  pmcp_tool_fn fn;
  unsigned flags;
} simple_tool;

static int add_simple_tools(pmcp_server *s) {
  static const simple_tool tools[] = {
      {"test_simple_text", "Returns one text item", tool_simple_text, 0},
      {"test_image_content", "Returns one image (a 1x1 PNG)", tool_image, 0},
      {"test_audio_content", "Returns one audio item (a short WAV)", tool_audio, 0},
      {"test_embedded_resource", "Returns an embedded text resource",
       tool_embedded_resource, 0},
      {"test_multiple_content_types", "Returns text, an image and a resource",
       tool_multiple_content, 0},
      {"test_error_handling", "Always fails with an isError result", tool_error, 0},
      {"test_tool_with_logging",
       "Sends three info log messages 50 ms apart while it runs", tool_logging,
       PMCP_TOOL_BLOCKING},
      {"test_tool_with_progress",
       "Reports progress 0, 50 and 100 of 100, 50 ms apart", tool_progress,
       PMCP_TOOL_BLOCKING},
      {"test_reconnection",
       "Outlives an SSE stream closure (SEP-1699): answers after 100 ms",
       tool_reconnection, PMCP_TOOL_BLOCKING},
      {"test_elicitation_sep1034_defaults",
       "Asks the client for a form whose fields all have defaults (SEP-1034)",
       tool_elicitation_defaults, PMCP_TOOL_BLOCKING},
      {"test_elicitation_sep1330_enums",
       "Asks the client for a form with the five enum styles (SEP-1330)",
       tool_elicitation_enums, PMCP_TOOL_BLOCKING},
  };
  for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
    pmcp_tool_def def = PMCP_TOOL_DEF_INIT;
    def.name = tools[i].name;
    def.description = tools[i].description;
    def.handler = tools[i].fn;
    def.flags = tools[i].flags;
    int rc = pmcp_server_add_tool(s, &def);
    if (rc)
      return rc;
  }
  return 0;
}

static int add_tool_with_args(pmcp_server *s, const char *name, const char *desc,
                              pmcp_tool_fn fn, unsigned flags,
                              const pmcp_arg_spec *args, size_t n_args,
                              void *ud) {
  pmcp_tool_def def = PMCP_TOOL_DEF_INIT;
  def.name = name;
  def.description = desc;
  def.handler = fn;
  def.flags = flags;
  def.args = args;
  def.n_args = n_args;
  def.ud = ud;
  return pmcp_server_add_tool(s, &def);
}

static int add_arg_tools(pmcp_server *s, watched *w) {
  static const pmcp_arg_spec prompt_arg[] = {
      {"prompt", PMCP_T_STRING, 1, "The prompt to send to the LLM", 0, 0, 0, 0,
       NULL, NULL}};
  static const pmcp_arg_spec message_arg[] = {
      {"message", PMCP_T_STRING, 1, "The message to show the user", 0, 0, 0, 0,
       NULL, NULL}};
  static const pmcp_arg_spec text_arg[] = {
      {"text", PMCP_T_STRING, 1, "The text to return", 0, 0, 0, 0, NULL, NULL}};
  static const pmcp_arg_spec ms_arg[] = {
      {"ms", PMCP_T_INTEGER, 1, "How long to sleep, in milliseconds", 1, 1, 0,
       60000, NULL, NULL}};
  static const pmcp_arg_spec content_arg[] = {
      {"content", PMCP_T_STRING, 1, "The new text of " WATCHED_URI, 0, 0, 0, 0,
       NULL, NULL}};
  int rc;
  if ((rc = add_tool_with_args(s, "test_sampling",
                               "Asks the client's LLM to answer a prompt "
                               "(sampling/createMessage)",
                               tool_sampling, PMCP_TOOL_BLOCKING, prompt_arg, 1,
                               NULL)))
    return rc;
  if ((rc = add_tool_with_args(s, "test_elicitation",
                               "Asks the user for a username and an email "
                               "(elicitation/create)",
                               tool_elicitation, PMCP_TOOL_BLOCKING, message_arg,
                               1, NULL)))
    return rc;
  if ((rc = add_tool_with_args(s, "echo", "Returns its text argument unchanged",
                               tool_echo, 0, text_arg, 1, NULL)))
    return rc;
  if ((rc = add_tool_with_args(s, "sleep",
                               "Sleeps, then says so; stops early when cancelled",
                               tool_sleep, PMCP_TOOL_BLOCKING, ms_arg, 1, NULL)))
    return rc;
  return add_tool_with_args(s, "test_watched_resource_update",
                            "Replaces the text of " WATCHED_URI
                            " and notifies its subscribers",
                            tool_watched_update, 0, content_arg, 1, w);
}

static int add_calculate(pmcp_server *s) {
  static const pmcp_arg_spec add_args[] = {
      {"a", PMCP_T_NUMBER, 1, "First addend", 0, 0, 0, 0, NULL, NULL},
      {"b", PMCP_T_NUMBER, 1, "Second addend", 0, 0, 0, 0, NULL, NULL}};
  static const pmcp_arg_spec negate_args[] = {
      {"x", PMCP_T_NUMBER, 1, "The number to negate", 0, 0, 0, 0, NULL, NULL}};
  static const pmcp_mode_spec modes[] = {
      {"add", "a + b", add_args, 2},
      {"negate", "-x", negate_args, 1}};
  pmcp_tool_def def = PMCP_TOOL_DEF_INIT;
  def.name = "calculate";
  def.title = "Calculator";
  def.description = "Adds two numbers (mode add) or negates one (mode negate)";
  def.modes = modes;
  def.n_modes = 2;
  def.output_schema_json =
      "{\"type\":\"object\",\"properties\":{\"value\":{\"type\":\"number\"}},"
      "\"required\":[\"value\"]}";
  def.read_only = PMCP_HINT_TRUE;
  def.idempotent = PMCP_HINT_TRUE;
  def.destructive = PMCP_HINT_FALSE;
  def.open_world = PMCP_HINT_FALSE;
  def.handler = tool_calculate;
  return pmcp_server_add_tool(s, &def);
}

static int add_json_schema_tool(pmcp_server *s) {
  pmcp_tool_def def = PMCP_TOOL_DEF_INIT;
  def.name = "json_schema_2020_12_tool";
  def.description = "Tool with JSON Schema 2020-12 features";
  def.input_schema_json = JSON_SCHEMA_2020_12;
  def.handler = tool_json_schema;
  return pmcp_server_add_tool(s, &def);
}

static int add_resources(pmcp_server *s, watched *w) {
  int rc;
  /* First, so that w has an owner (ud_free runs even when adding fails). */
  pmcp_resource_def r = PMCP_RESOURCE_DEF_INIT;
  r.uri = WATCHED_URI;
  r.name = "watched-resource";
  r.description = "A resource to subscribe to; test_watched_resource_update "
                  "changes it";
  r.mime_type = "text/plain";
  r.read = read_watched;
  r.ud = w;
  r.ud_free = watched_free;
  if ((rc = pmcp_server_add_resource(s, &r)))
    return rc;

  r = (pmcp_resource_def)PMCP_RESOURCE_DEF_INIT;
  r.uri = "test://static-text";
  r.name = "static-text";
  r.description = "A static text resource";
  r.mime_type = "text/plain";
  r.read = read_static_text;
  if ((rc = pmcp_server_add_resource(s, &r)))
    return rc;

  r = (pmcp_resource_def)PMCP_RESOURCE_DEF_INIT;
  r.uri = "test://static-binary";
  r.name = "static-binary";
  r.description = "A static binary resource (a 1x1 PNG)";
  r.mime_type = "image/png";
  r.read = read_static_binary;
  if ((rc = pmcp_server_add_resource(s, &r)))
    return rc;

  r = (pmcp_resource_def)PMCP_RESOURCE_DEF_INIT;
  r.uri_template = TEMPLATE_URI;
  r.name = "template";
  r.description = "A resource template: {id} is substituted into the data";
  r.mime_type = "application/json";
  r.read = read_template;
  return pmcp_server_add_resource(s, &r);
}

static int add_prompts(pmcp_server *s) {
  static const pmcp_prompt_arg with_args[] = {
      {"arg1", "First test argument", 1}, {"arg2", "Second test argument", 1}};
  static const pmcp_prompt_arg resource_arg[] = {
      {"resourceUri", "URI of the resource to embed", 1}};
  int rc;
  pmcp_prompt_def p = PMCP_PROMPT_DEF_INIT;
  p.name = "test_simple_prompt";
  p.description = "A simple prompt without arguments";
  p.get = prompt_simple;
  if ((rc = pmcp_server_add_prompt(s, &p)))
    return rc;

  p = (pmcp_prompt_def)PMCP_PROMPT_DEF_INIT;
  p.name = "test_prompt_with_arguments";
  p.description = "A prompt with two required arguments";
  p.args = with_args;
  p.n_args = 2;
  p.get = prompt_with_args;
  if ((rc = pmcp_server_add_prompt(s, &p)))
    return rc;

  p = (pmcp_prompt_def)PMCP_PROMPT_DEF_INIT;
  p.name = "test_prompt_with_embedded_resource";
  p.description = "A prompt that embeds a resource";
  p.args = resource_arg;
  p.n_args = 1;
  p.get = prompt_embedded_resource;
  if ((rc = pmcp_server_add_prompt(s, &p)))
    return rc;

  p = (pmcp_prompt_def)PMCP_PROMPT_DEF_INIT;
  p.name = "test_prompt_with_image";
  p.description = "A prompt with an image";
  p.get = prompt_image;
  return pmcp_server_add_prompt(s, &p);
}

int everything_register(pmcp_server *server) {
  watched *w = calloc(1, sizeof *w);
  if (!w)
    return PMCP_ENOMEM;
  w->text = strdup("Watched resource content");
  if (!w->text || pthread_mutex_init(&w->lock, NULL) != 0) {
    free(w->text);
    free(w);
    return PMCP_ENOMEM;
  }
  /* The resource takes ownership of w first, so every later failure leaves
   * it to the server. */
  int rc = add_resources(server, w);
  if (rc)
    return rc;
  if ((rc = add_simple_tools(server)) || (rc = add_arg_tools(server, w)) ||
      (rc = add_calculate(server)) || (rc = add_json_schema_tool(server)) ||
      (rc = add_prompts(server)) || (rc = everything_register_input(server)) ||
      (rc = everything_register_tasks(server)) || (rc = everything_register_skills(server)))
    return rc;
  return pmcp_server_set_completion(server, complete, NULL, NULL);
}
