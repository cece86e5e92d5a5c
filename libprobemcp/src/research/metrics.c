/* `metrics`: "what are the numbers?" One question about grain, asked with
 * a required `mode` (seed 000's table, plus seed 001's summaries,
 * histograms, scatter sets, time axes and RL reductions as modes and
 * options). The engine validates each mode against its own arguments, so
 * an argument the mode does not read (points with `by`) is refused. */
#include "research/metrics.h"

#include <string.h>

static const char *const kinds_all[] = {"float", "histogram", "scatter", NULL};
static const char *const kinds_float[] = {"float", NULL};
static const char *const scales[] = {"step", "env_step", "episode", NULL};
static const char *const aggs[] = {"mean", "min", "max", "count", "sum", "first", "last", NULL};
static const char *const axes[] = {"step", "wall_clock", "relative_time", NULL};
static const char *const acrosses[] = {"avg", "min", "max", "sum", "std", "median", NULL};

#define A_RUN_ID(req) {"run_id", PMCP_T_STRING, req, \
    "the run: run:ID as browse returns it, or the bare ID", 1, 1, 1, 260, NULL, NULL}
#define A_STEP_FROM {"step_from", PMCP_T_INTEGER, 0, \
    "first step (inclusive); a number, never an MCP cursor", 0, 0, 0, 0, NULL, NULL}
#define A_STEP_TO {"step_to", PMCP_T_INTEGER, 0, "last step (inclusive)", 0, 0, 0, 0, NULL, NULL}
#define A_WHERE {"where", PMCP_T_ARRAY, 0, \
    "series selected by their labels, in the filter language of the tracking tools: a list " \
    "of conditions that must all hold, each {\"attr\":LABEL,\"op\":OP,\"value\":V} with op " \
    "eq, ne, gt, gte, lt, lte, matches (RE2), contains, contains_any, contains_all, in, " \
    "not_in or exists, or {\"any_of\":[...]}; a label compared with a number is read as a " \
    "number", 0, 1, 0, 32, NULL, NULL}
#define A_SCALE {"scale", PMCP_T_STRING, 0, \
    "step (default); RL series need env_step (per-step values) or episode", 0, 0, 0, 0, \
    scales, NULL}

static const pmcp_arg_spec grouped_args[] = {
  A_RUN_ID(1),
  {"key", PMCP_T_STRING, 1, "the metric key, e.g. train/loss", 1, 1, 1, 500, NULL, NULL},
  {"kind", PMCP_T_STRING, 0, "float (grouped reads float series)", 0, 0, 0, 0, kinds_float,
   NULL},
  {"agg", PMCP_T_STRING_ARRAY, 0, "per-bucket values (default mean, min, max, count)",
   1, 1, 1, 7, aggs, NULL},
  {"by", PMCP_T_STRING_ARRAY, 0, "label keys to group series by (e.g. [\"rank\"]); absent: "
   "one group", 0, 1, 0, 8, NULL, NULL},
  A_WHERE,
  {"step_bucket", PMCP_T_INTEGER, 0, "bucket width in the axis unit (steps; ms on time "
   "axes); absent: the range split into max_rows buckets", 1, 0, 1, 0, NULL, NULL},
  A_STEP_FROM,
  A_STEP_TO,
  {"max_rows", PMCP_T_INTEGER, 0, "most buckets per group (default: what fits the budget, "
   "at most 100)", 1, 1, 1, 1000, NULL, NULL},
  {"axis", PMCP_T_STRING, 0, "bucket axis: step, wall_clock (ms since epoch) or "
   "relative_time (ms since the first point)", 0, 0, 0, 0, axes, "\"step\""},
  A_SCALE,
  {"across", PMCP_T_STRING, 0, "reduce the group's series (environments, ranks) with avg, min, "
   "max, sum, std or median of their bucket means instead of pooling points", 0, 0, 0, 0,
   acrosses, NULL},
};

static const pmcp_arg_spec coord_args[] = {A_RUN_ID(1)};

static const pmcp_arg_spec points_args[] = {
  A_RUN_ID(1),
  {"key", PMCP_T_STRING, 0, "one metric key; absent: every series of the kind", 1, 1, 1, 500,
   NULL, NULL},
  {"kind", PMCP_T_STRING, 0, "float (default): points; histogram: whole histograms; scatter: "
   "scatter sets per step", 0, 0, 0, 0, kinds_all, "\"float\""},
  A_STEP_FROM,
  A_STEP_TO,
  {"after_id", PMCP_T_STRING, 0, "continue after this point: the last_id of a points item "
   "(not an MCP cursor)", 1, 1, 1, 100, NULL, NULL},
  {"limit", PMCP_T_INTEGER, 0, "most points (or sets) on the page", 1, 1, 1, 10000, NULL,
   "500"},
  A_WHERE,
  {"stat", PMCP_T_STRING, 0, "histograms only: one value per step instead of whole "
   "histograms: mean, std, min, max, median or pN (percentile, e.g. p95)", 1, 1, 1, 8, NULL,
   NULL},
  {"density", PMCP_T_BOOLEAN, 0, "histograms only: densities instead of counts", 0, 0, 0, 0,
   NULL, NULL},
};

static const pmcp_arg_spec series_args[] = {
  {"run_ids", PMCP_T_STRING_ARRAY, 1, "runs (run:ID or ID)", 1, 1, 1, 20, NULL, NULL},
  {"keys", PMCP_T_STRING_ARRAY, 1, "metric keys", 1, 1, 1, 20, NULL, NULL},
  A_STEP_FROM,
  A_STEP_TO,
  {"smoothing", PMCP_T_NUMBER, 0, "EMA weight in [0, 1) as TensorBoard's (debiased); adds a "
   "smoothed array", 1, 1, 0, 1, NULL, NULL},
  {"max_points", PMCP_T_INTEGER, 0, "points per row after downsampling (endpoints and "
   "extremes always kept)", 1, 1, 4, 2000, NULL, "100"},
  A_WHERE,
  A_SCALE,
};

static const pmcp_arg_spec summaries_args[] = {
  {"run_ids", PMCP_T_STRING_ARRAY, 1, "runs (run:ID or ID)", 1, 1, 1, 50, NULL, NULL},
  {"keys", PMCP_T_STRING_ARRAY, 0, "metric keys; absent: every series", 1, 1, 1, 50, NULL,
   NULL},
  A_WHERE,
  A_SCALE,
};

#define N(a) (sizeof a / sizeof a[0])

static const pmcp_mode_spec modes[] = {
  {"grouped", "one key reduced over label axes and buckets", grouped_args, N(grouped_args)},
  {"coordinates", "the run's catalog: keys, labels and their values, scales, counts",
   coord_args, N(coord_args)},
  {"points", "raw points losslessly, one bounded page", points_args, N(points_args)},
  {"series", "runs x keys side by side, one downsampled row per series", series_args,
   N(series_args)},
  {"summaries", "first, last, min, max, avg, count per series", summaries_args,
   N(summaries_args)},
};

static const char desc[] =
  "What are the numbers? mode is required; each mode refuses arguments it does not read. "
  "grouped: run_id+key reduced into buckets (mean/min/max/count, or agg) per group of `by` "
  "labels; axis step|wall_clock|relative_time; step_bucket = width in axis units; across = "
  "avg/min/max/sum/std/median over the group's series (RL environments). "
  "coordinates: run_id's keys, labels, scales, counts. "
  "points: raw points of run_id losslessly (kind histogram|scatter: sets; stat: one "
  "histogram statistic per step); continue with after_id = an item's last_id. "
  "series: run_ids x keys, one row per series downsampled to max_points keeping endpoints and "
  "extremes; smoothing = EMA weight [0,1). "
  "summaries: first/last/min/max/avg per series (e.g. final loss of every worker). "
  "RL series (env_step/episode) need scale. Compact JSON, parallel arrays, 6 significant "
  "figures (points: exact); missing points left out, non-finite values counted in non_finite.";

static int metrics(pmcp_call *call, void *ud)
{
  pmcp__research *rs = ud;
  const char *mode = pmcp_call_mode(call);
  if (!strcmp(mode, "grouped"))
    return pmcp__mx_grouped(call, rs);
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
  d.title = "Metrics at the grain asked for";
  d.description = desc;
  d.modes = modes;
  d.n_modes = N(modes);
  d.read_only = PMCP_HINT_TRUE;
  d.destructive = PMCP_HINT_FALSE;
  d.idempotent = PMCP_HINT_TRUE;
  d.open_world = PMCP_HINT_FALSE;
  d.flags = PMCP_TOOL_BUDGETED | PMCP_TOOL_BLOCKING;
  d.handler = metrics;
  d.ud = pmcp__research_retain(rs);
  d.ud_free = pmcp__research_release;
  return pmcp__rs_add_tool(server, &d, 1);
}
