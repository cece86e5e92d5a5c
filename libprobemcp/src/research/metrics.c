/* SPDX-License-Identifier: MIT */
/* `metrics`: "what are the numbers?" One question about grain, asked with
 * a required `mode` (points, series, ..., plus run-filtered summaries,
 * histograms, scatter sets, time axes and RL reductions as modes and
 * options). The engine validates each mode against its own arguments, so
 * an argument the mode does not read (points with `by`) is refused. */
#include "research/metrics.h"

#include "research/app.h"

#include <string.h>

#ifdef PMCP_HAVE_CAIRO
#include "research/chart.h"
#endif

static const char *const kinds_all[] = {"float", "histogram", "scatter", NULL};
static const char *const kinds_float[] = {"float", NULL};
static const char *const scales[] = {"step", "env_step", "episode", NULL};
static const char *const aggs[] = {"mean", "min", "max", "count", "sum", "first", "last", NULL};
static const char *const axes[] = {"step", "wall_clock", "relative_time", NULL};
static const char *const acrosses[] = {"avg", "min", "max", "sum", "std", "median", NULL};

#define A_RUN_ID(req) {"run_id", PMCP_T_STRING, req, \
    "run:ID or ID", 1, 0, 1, 0, NULL, NULL}
#define A_STEP_FROM {"step_from", PMCP_T_INTEGER, 0, \
    "from step", 0, 0, 0, 0, NULL, NULL}
#define A_STEP_TO {"step_to", PMCP_T_INTEGER, 0, "to step (inclusive)", 0, 0, 0, 0, NULL, NULL}
#define A_WHERE {"where", PMCP_T_ARRAY, 0, \
    "label filters, all hold: {attr,op,value} (op eq ne gt gte lt lte in not_in matches " \
    "contains exists) or {any_of:[...]}", 0, 1, 0, 32, NULL, NULL}
#define A_SCALE {"scale", PMCP_T_STRING, 0, \
    "RL series need env_step or episode", 0, 0, 0, 0, \
    scales, NULL}

static const pmcp_arg_spec grouped_args[] = {
  A_RUN_ID(1),
  {"key", PMCP_T_STRING, 1, "metric key", 1, 0, 1, 0, NULL, NULL},
  {"kind", PMCP_T_STRING, 0, "grouped: float", 0, 0, 0, 0, kinds_float,
   NULL},
  {"agg", PMCP_T_STRING_ARRAY, 0, "per-bucket values (default mean min max count)",
   1, 0, 1, 0, aggs, NULL},
  {"by", PMCP_T_STRING_ARRAY, 0, "label keys to group by", 0, 1, 0, 8, NULL, NULL},
  A_WHERE,
  {"step_bucket", PMCP_T_INTEGER, 0, "bucket width in axis units (steps or ms)", 1, 0, 1, 0, NULL, NULL},
  A_STEP_FROM,
  A_STEP_TO,
  {"max_rows", PMCP_T_INTEGER, 0, "most buckets per group (default: what fits the budget)", 1, 1, 1, 1000, NULL, NULL},
  {"axis", PMCP_T_STRING, 0, "time axes in ms", 0, 0, 0, 0, axes, "\"step\""},
  A_SCALE,
  {"across", PMCP_T_STRING, 0, "reduce series' bucket means, not pool", 0, 0, 0, 0,
   acrosses, NULL},
};

static const pmcp_arg_spec coord_args[] = {A_RUN_ID(1)};

static const pmcp_arg_spec points_args[] = {
  A_RUN_ID(1),
  {"key", PMCP_T_STRING, 0, "one key; absent: every series", 1, 0, 1, 0,
   NULL, NULL},
  {"kind", PMCP_T_STRING, 0, "histogram, scatter: sets per step", 0, 0, 0, 0, kinds_all, "\"float\""},
  A_STEP_FROM,
  A_STEP_TO,
  {"after_id", PMCP_T_STRING, 0, "continue after an item's last_id", 1, 0, 1, 0, NULL, NULL},
  {"limit", PMCP_T_INTEGER, 0, "most points (or sets)", 1, 1, 1, 10000, NULL,
   "500"},
  A_WHERE,
  {"stat", PMCP_T_STRING, 0, "histograms: mean std min max median or pN per step", 1, 1, 1, 8, NULL,
   NULL},
  {"density", PMCP_T_BOOLEAN, 0, "histograms: densities, not counts", 0, 0, 0, 0,
   NULL, NULL},
};

static const pmcp_arg_spec series_args[] = {
  {"run_ids", PMCP_T_STRING_ARRAY, 1, "run:ID or ID each", 1, 1, 1, 20, NULL, NULL},
  {"keys", PMCP_T_STRING_ARRAY, 1, "metric keys", 1, 1, 1, 20, NULL, NULL},
  A_STEP_FROM,
  A_STEP_TO,
  {"smoothing", PMCP_T_NUMBER, 0, "TensorBoard EMA weight [0,1): adds smoothed", 1, 1, 0, 1, NULL, NULL},
  {"max_points", PMCP_T_INTEGER, 0, "points per row (exact), ends and extremes kept", 1, 1, 4, 2000, NULL, "100"},
  A_WHERE,
  A_SCALE,
#ifdef PMCP_HAVE_CAIRO
  PMCP__CHART_ARG_RENDER,
#endif
};

static const pmcp_arg_spec summaries_args[] = {
  {"run_ids", PMCP_T_STRING_ARRAY, 1, "run:ID or ID each", 1, 1, 1, 50, NULL, NULL},
  {"keys", PMCP_T_STRING_ARRAY, 0, "absent: every series", 1, 1, 1, 50, NULL,
   NULL},
  A_WHERE,
  A_SCALE,
};

#define N(a) (sizeof a / sizeof a[0])

static const pmcp_mode_spec modes[] = {
  {"grouped", "run_id+key in buckets per by-label group", grouped_args, N(grouped_args)},
  {"coordinates", "run_id's keys, labels, scales, counts", coord_args, N(coord_args)},
  {"points", "raw points, exact", points_args, N(points_args)},
  {"series", "run_ids x keys, a downsampled row each", series_args,
   N(series_args)},
  {"summaries", "first last min max avg count per series", summaries_args,
   N(summaries_args)},
};

static const char desc[] =
  "What are the numbers? Parallel arrays, 6 significant digits (points exact), "
  "non-finite counted.";

static int metrics(pmcp_call *call, void *ud)
{
  pmcp__research *rs = ud;
  const char *mode = pmcp_call_mode(call);
  /* A grouped reduction reads every point of the runs it groups: for a
   * client that takes tasks it runs as one (polled, not waited on). */
  if (!strcmp(mode, "grouped"))
    return pmcp_call_task(call) ? 0 : pmcp__mx_grouped(call, rs);
  if (!strcmp(mode, "coordinates"))
    return pmcp__mx_coordinates(call, rs);
  if (!strcmp(mode, "points"))
    return pmcp__mx_points(call, rs);
  if (!strcmp(mode, "series"))
    return pmcp__mx_series_mode(call, rs);
  return pmcp__mx_summaries(call, rs);
}

int pmcp__research_add_metrics(pmcp_server *server, pmcp__research *rs)
{
  pmcp_tool_def d = PMCP_TOOL_DEF_INIT;
  d.name = "metrics";
  d.title = "Metrics";
  d.description = desc;
  d.modes = modes;
  d.n_modes = N(modes);
  d.read_only = PMCP_HINT_TRUE;
  /* destructive and idempotent hints mean something only for tools that
   * write (MCP): read-only says it all */
  d.open_world = PMCP_HINT_FALSE;
  d.flags = PMCP_TOOL_BUDGETED | PMCP_TOOL_BLOCKING | PMCP_TOOL_TASK_ON_DEMAND;
  d.handler = metrics;
  d.ud = pmcp__research_retain(rs);
  d.ud_free = pmcp__research_release;
  int rc = pmcp__rs_add_tool(server, &d, 1);
  return rc ? rc : pmcp__app_curves_attach(server, "metrics");
}
