/* SPDX-License-Identifier: MIT */
/* probe demo: the generated part of the demo lab, written through the
 * store API in one transaction. Everything is deterministic (a fixed
 * PRNG seed, fixed times) so two demo stores hold the same lab. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo/demo.h"

#define T0 1714521600000LL /* 2024-05-01T00:00:00Z */
#define HOUR 3600000LL
#define DAY (24 * HOUR)

typedef struct lab {
  pmcp_store *s;
  pmcp_tenant t;
  uint64_t rng;
  int rc;
} lab;

static double rnd(lab *L)
{
  L->rng ^= L->rng << 13;
  L->rng ^= L->rng >> 7;
  L->rng ^= L->rng << 17;
  return (double)(L->rng >> 11) / 9007199254740992.0;
}

static void put(lab *L, const char *kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(lab *L, const char *kind, const char *fmt, ...)
{
  if (L->rc)
    return;
  char json[8192];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(json, sizeof json, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof json) {
    L->rc = pmcp_store_set_error(L->s, PMCP_EINTERNAL, "demo record too long");
    return;
  }
  L->rc = pmcp_store_put(L->s, L->t, kind, json, (size_t)n, NULL);
}

static void create(lab *L, const char *kind, const char *id, const char *name, const char *parent,
                   const char *desc, const char *body, int64_t created)
{
  if (L->rc)
    return;
  pmcp_entity_spec e = PMCP_ENTITY_SPEC_INIT;
  e.id = id;
  e.name = name;
  e.parent = parent;
  e.description = desc;
  e.body = body;
  e.created_ms = created;
  L->rc = pmcp_store_create(L->s, L->t, kind, &e, NULL);
}

static void attr_s(lab *L, const char *ref, const char *path, const char *v)
{
  pmcp_value x = {PMCP_V_STRING, v, 0, 0, NULL, 0};
  if (!L->rc)
    L->rc = pmcp_store_set_attr(L->s, L->t, ref, path, &x);
}

static void attr_i(lab *L, const char *ref, const char *path, int64_t v)
{
  pmcp_value x = {PMCP_V_INT, NULL, v, 0, NULL, 0};
  if (!L->rc)
    L->rc = pmcp_store_set_attr(L->s, L->t, ref, path, &x);
}

static void attr_f(lab *L, const char *ref, const char *path, double v)
{
  pmcp_value x = {PMCP_V_FLOAT, NULL, 0, v, NULL, 0};
  if (!L->rc)
    L->rc = pmcp_store_set_attr(L->s, L->t, ref, path, &x);
}

static void attr_b(lab *L, const char *ref, const char *path, int v)
{
  pmcp_value x = {PMCP_V_BOOL, NULL, v, 0, NULL, 0};
  if (!L->rc)
    L->rc = pmcp_store_set_attr(L->s, L->t, ref, path, &x);
}

static void tag(lab *L, const char *ref, const char *t)
{
  if (!L->rc)
    L->rc = pmcp_store_tag(L->s, L->t, ref, t, 1);
}

static void note(lab *L, const char *on, const char *kind, const char *title, const char *body,
                 const char *summary, const char *status, const char *author, const char *via,
                 int64_t when, const char *parent, pmcp_buf *id)
{
  if (L->rc)
    return;
  pmcp_note_spec n = PMCP_NOTE_SPEC_INIT;
  n.on = on;
  n.kind = kind;
  n.title = title;
  n.body = body;
  n.summary = summary;
  n.status = status;
  n.author = author;
  n.via = via;
  n.created_ms = when;
  n.parent = parent;
  L->rc = pmcp_store_note(L->s, L->t, &n, id, NULL);
}

static void artifact(lab *L, const char *name, const char *on, const char *path, const char *text,
                     const char *uri, size_t size, const char *sha, const char *label,
                     const char *desc, int64_t when)
{
  if (L->rc)
    return;
  pmcp_artifact_spec a = PMCP_ARTIFACT_SPEC_INIT;
  a.name = name;
  a.on = on;
  a.path = path;
  a.description = desc;
  a.created_ms = when;
  if (text) {
    a.content = text;
    a.size = strlen(text);
  } else {
    a.uri = uri;
    a.size = size;
    a.sha256 = sha;
  }
  const char *labels[1] = {label};
  if (label) {
    a.labels = labels;
    a.n_labels = 1;
  }
  L->rc = pmcp_store_artifact_add(L->s, L->t, &a, NULL, NULL);
}

static int64_t series(lab *L, const char *run, const char *key, const pmcp_label *labels,
                      size_t nl, pmcp_metric_kind kind, pmcp_metric_scale scale)
{
  int64_t id = 0;
  pmcp_series_spec sp = {PMCP_SERIES_SPEC_VERSION, key, labels, nl, kind, scale};
  if (!L->rc)
    L->rc = pmcp_store_series(L->s, L->t, run, &sp, &id);
  return id;
}

static void hexid(lab *L, char *out, size_t n)
{
  static const char hx[] = "0123456789abcdef";
  for (size_t i = 0; i + 1 < n; i++)
    out[i] = hx[(int)(rnd(L) * 16) & 15];
  out[n - 1] = '\0';
}

/* A classification run: loss falling with lr-dependent speed, accuracy
 * rising; diverges (NaN) when the lr is too high. Returns the best
 * validation accuracy and its step. */
static double training_curves(lab *L, const char *run, double lr, int warmup, int ranks,
                              int diverge_at, int64_t start, int steps, int64_t *best_step)
{
  int64_t loss_s[2], acc_s, lr_s;
  pmcp_label rk[2][1] = {{{"rank", "0"}}, {{"rank", "1"}}};
  for (int r = 0; r < ranks; r++)
    loss_s[r] = series(L, run, "train/loss", ranks > 1 ? rk[r] : NULL, ranks > 1 ? 1 : 0,
                       PMCP_METRIC_FLOAT, PMCP_SCALE_STEP);
  acc_s = series(L, run, "val/acc", NULL, 0, PMCP_METRIC_FLOAT, PMCP_SCALE_STEP);
  lr_s = series(L, run, "lr", NULL, 0, PMCP_METRIC_FLOAT, PMCP_SCALE_STEP);
  if (L->rc)
    return 0;
  double speed = 0.6 + 4.0 * fmin(lr, 0.3);
  double floor_loss = 0.25 + 0.6 * fabs(log10(lr / 0.05)) / 2.0;
  pmcp_point *pts = malloc((size_t)steps * sizeof *pts);
  pmcp_point accp[64], lrp[512];
  size_t nacc = 0, nlr = 0;
  double best = 0;
  *best_step = 0;
  for (int r = 0; r < ranks && !L->rc; r++) {
    for (int i = 0; i < steps; i++) {
      double x = (double)i / steps;
      double w = warmup ? fmin(1.0, (double)(i * 4) / warmup) : 1.0;
      double v = floor_loss + 2.1 * exp(-speed * 6 * x * w) + 0.04 * (rnd(L) - 0.5) * (1 + r);
      if (warmup == 0 && lr >= 0.3 && i > 40 && i < 90)
        v += 0.8 * exp(-(double)(i - 40) / 15.0); /* an early loss spike */
      if (diverge_at && i >= diverge_at)
        v = i == diverge_at ? 1e6 : NAN;
      pts[i] = (pmcp_point){(int64_t)i * 10, start + (int64_t)i * 1400 + r * 3, (double)(float)v};
      if (r == 0 && i % 25 == 0 && nacc < 64) {
        double a = diverge_at && i >= diverge_at ? 0.1
                                                 : 0.93 - 0.55 * exp(-speed * 5 * x) -
                                                       0.25 * (floor_loss - 0.25) +
                                                       0.01 * (rnd(L) - 0.5);
        accp[nacc++] = (pmcp_point){(int64_t)i * 10, pts[i].time_ms, (double)(float)a};
        if (a > best) {
          best = a;
          *best_step = (int64_t)i * 10;
        }
      }
      if (r == 0 && i % 4 == 0 && nlr < 512) {
        double sched = lr * (warmup && i * 10 < warmup ? (double)(i * 10) / warmup
                                                       : 0.5 * (1 + cos(M_PI * x)));
        lrp[nlr++] = (pmcp_point){(int64_t)i * 10, pts[i].time_ms, sched};
      }
    }
    L->rc = pmcp_store_log(L->s, L->t, loss_s[r], pts, (size_t)steps);
  }
  if (!L->rc)
    L->rc = pmcp_store_log(L->s, L->t, acc_s, accp, nacc);
  if (!L->rc)
    L->rc = pmcp_store_log(L->s, L->t, lr_s, lrp, nlr);
  free(pts);
  return best;
}

static void workspaces_projects(lab *L)
{
  create(L, "workspace", "vision", "Vision team", NULL, "Image classification and detection", NULL,
         T0);
  create(L, "workspace", "rl", "RL team", NULL, "Reinforcement learning on control tasks", NULL,
         T0);
  create(L, "project", "cifar-resnet", "CIFAR-10 ResNet", "workspace:vision",
         "ResNet-18 on CIFAR-10: baselines, learning-rate sweep, warmup ablation",
         "# CIFAR-10 ResNet\n\nReproducible ResNet-18 training on CIFAR-10.\n\n"
         "## Layout\n- `baseline`: four seeds of the reference recipe (SGD, lr 0.1, cosine).\n"
         "- `lr-sweep`: learning rate x batch size grid.\n"
         "- `warmup-ablation`: linear warmup lengths on the best sweep setting.\n\n"
         "## How to run\n```\npython train.py --config configs/base.yaml --lr 0.1\n```\n"
         "Data: `dataset:cifar10@v2` (deduplicated). Checkpoints go to s3://example-lab-ckpt/.\n",
         T0 + HOUR);
  create(L, "project", "rl-cartpole", "CartPole PPO", "workspace:rl",
         "PPO on CartPole-v1 with vectorised environments",
         "# CartPole PPO\n\nPPO with 4 parallel environments; episode returns are logged per\n"
         "environment (label `env`) on the `episode` scale, losses on `env_step`.\n",
         T0 + 2 * HOUR);
  create(L, "experiment", "baseline", "baseline", "project:cifar-resnet",
         "Reference recipe, four seeds",
         "{\"model\":\"resnet18\",\"epochs\":30,\"optimizer\":{\"name\":\"sgd\",\"momentum\":0.9,"
         "\"weight_decay\":0.0005},\"schedule\":\"cosine\",\"augment\":[\"crop\",\"flip\"]}",
         T0 + 3 * HOUR);
  create(L, "experiment", "lr-sweep", "lr-sweep", "project:cifar-resnet",
         "Learning rate x batch size grid",
         "{\"model\":\"resnet18\",\"epochs\":30,\"optimizer\":{\"name\":\"sgd\",\"momentum\":0.9},"
         "\"schedule\":\"cosine\"}",
         T0 + DAY);
  create(L, "experiment", "warmup-ablation", "warmup-ablation", "project:cifar-resnet",
         "Linear warmup length at lr 0.3, batch 256",
         "{\"model\":\"resnet18\",\"epochs\":30,\"lr\":0.3,\"batch_size\":256}", T0 + 3 * DAY);
  create(L, "experiment", "hpo", "hpo", "project:cifar-resnet",
         "Random search over lr and weight decay (one run, many trials)", NULL, T0 + 4 * DAY);
  create(L, "experiment", "ppo", "ppo", "project:rl-cartpole", "PPO, 4 environments",
         "{\"algo\":\"ppo\",\"env\":\"CartPole-v1\",\"n_envs\":4,\"gamma\":0.99}", T0 + 2 * DAY);
  put(L, "experiment-version", "{\"experiment\":\"lr-sweep\",\"description\":\"first grid: lr "
      "0.003-0.3\",\"config\":{\"lrs\":[0.003,0.01,0.03,0.1,0.3],\"batch_sizes\":[128,256]},"
      "\"author\":\"ana\"}");
  put(L, "experiment-version", "{\"experiment\":\"lr-sweep\",\"description\":\"added lr 1.0 to "
      "find the divergence edge\",\"config\":{\"lrs\":[0.003,0.01,0.03,0.1,0.3,1.0],"
      "\"batch_sizes\":[128,256]},\"author\":\"ben\"}");
  put(L, "experiment-version", "{\"experiment\":\"baseline\",\"description\":\"reference recipe"
      "\",\"config\":{\"lr\":0.1,\"batch_size\":128},\"author\":\"ana\"}");
  attr_f(L, "experiment:warmup-ablation", "config/lr", 0.3);
  attr_i(L, "experiment:warmup-ablation", "config/batch_size", 256);
}

static void make_run(lab *L, const char *id, const char *exp, const char *status, int64_t start,
                     int64_t end, const char *cmd, int dirty, const char *branch)
{
  if (L->rc)
    return;
  char commit[41];
  hexid(L, commit, sizeof commit);
  pmcp_run_spec r = PMCP_RUN_SPEC_INIT;
  r.id = id;
  r.name = id;
  r.experiment = exp;
  r.status = status;
  r.created_ms = start;
  r.started_ms = start;
  r.ended_ms = end;
  r.command = cmd;
  r.environment = "{\"python\":\"3.11.6\",\"torch\":\"2.2.1\",\"cuda\":\"12.1\","
                  "\"gpu\":\"NVIDIA A100-SXM4-80GB\",\"host\":\"gpu-node-07\","
                  "\"CUDA_VISIBLE_DEVICES\":\"0\"}";
  r.git_commit = commit;
  r.git_branch = branch;
  r.git_remote = "https://github.com/example-lab/cifar-resnet.git";
  r.git_dirty = dirty;
  r.git_diff = dirty ? "diff --git a/train.py b/train.py\nindex 3f1c2aa..9b0e7d1 100644\n"
                       "--- a/train.py\n+++ b/train.py\n@@ -88,7 +88,7 @@ def train(cfg):\n"
                       "-    clip = None\n+    clip = cfg.get(\"grad_clip\", 1.0)\n"
                       "     for step, batch in enumerate(loader):\n"
                     : NULL;
  L->rc = pmcp_store_run_create(L->s, L->t, &r, NULL);
}

static void cifar_runs(lab *L)
{
  char id[64], ref[80], cmd[256], yaml[512];
  /* Baseline: four seeds, two ranks each. */
  for (int seed = 0; seed < 4 && !L->rc; seed++) {
    int64_t start = T0 + 3 * HOUR + seed * 2 * HOUR;
    snprintf(id, sizeof id, "baseline-seed%d", seed);
    snprintf(ref, sizeof ref, "run:%s", id);
    snprintf(cmd, sizeof cmd, "torchrun --nproc-per-node 2 train.py --config configs/base.yaml "
             "--seed %d", seed);
    make_run(L, id, "experiment:baseline", "finished", start, start + 47 * 60000, cmd, 0, "main");
    attr_i(L, ref, "config/seed", seed);
    attr_f(L, ref, "config/lr", 0.1);
    attr_i(L, ref, "config/batch_size", 128);
    attr_s(L, ref, "config/optimizer/name", "sgd");
    attr_b(L, ref, "config/amp", 1);
    int64_t bs;
    double best = training_curves(L, ref, 0.1, 0, 2, 0, start, 600, &bs);
    attr_f(L, ref, "summary/best_val_acc", best);
    tag(L, ref, "baseline");
    put(L, "checkpoint", "{\"run\":\"%s\",\"step\":%lld,\"best\":true,\"stored\":true,\"uri\":"
        "\"s3://example-lab-ckpt/cifar/%s/best.pt\",\"size\":44781234,\"metric\":\"val/acc\","
        "\"value\":%.4f}", id, (long long)bs, id, best);
    put(L, "checkpoint", "{\"run\":\"%s\",\"step\":5990,\"uri\":\"s3://example-lab-ckpt/cifar/%s/"
        "last.pt\",\"size\":44781234}", id, id);
    put(L, "run-use", "{\"run\":\"%s\",\"uses\":\"dataset:cifar10@v2\"}", id);
    put(L, "run-use", "{\"run\":\"%s\",\"uses\":\"source:hf-resnet18.a1_in1k\"}", id);
  }
  /* Histograms of gradient norms and an embedding scatter for seed 0. */
  if (!L->rc) {
    int64_t h = series(L, "run:baseline-seed0", "grad/norm", NULL, 0, PMCP_METRIC_HISTOGRAM,
                       PMCP_SCALE_STEP);
    for (int k = 0; k < 8 && !L->rc; k++) {
      double edges[11], counts[10];
      double center = 2.0 * exp(-k / 3.0) + 0.2;
      for (int b = 0; b <= 10; b++)
        edges[b] = center * (0.2 * b);
      for (int b = 0; b < 10; b++)
        counts[b] = floor(400 * exp(-pow((b - 5) / 2.0, 2)) + 10 * rnd(L));
      L->rc = pmcp_store_log_histogram(L->s, L->t, h, k * 750, T0 + 3 * HOUR + k * 600000,
                                       edges, counts, 10);
    }
    int64_t sc = series(L, "run:baseline-seed0", "embeddings/pca", NULL, 0, PMCP_METRIC_SCATTER,
                        PMCP_SCALE_STEP);
    double x[60], y[60];
    for (int i = 0; i < 60; i++) {
      int cls = i % 3;
      x[i] = cls * 2.0 + rnd(L) - 0.5;
      y[i] = (cls == 1 ? 2.0 : 0.0) + rnd(L) - 0.5;
    }
    if (!L->rc)
      L->rc = pmcp_store_log_scatter(L->s, L->t, sc, 5990, T0 + 4 * HOUR, x, y, 60);
  }
  /* The sweep: 6 lrs x 2 batch sizes; lr 1.0 diverges; one run is live. */
  static const double lrs[] = {0.003, 0.01, 0.03, 0.1, 0.3, 1.0};
  static const int bss[] = {128, 256};
  double best_acc = 0;
  char best_run[64] = "";
  int64_t best_run_step = 0;
  for (int li = 0; li < 6; li++)
    for (int bi = 0; bi < 2 && !L->rc; bi++) {
      double lr = lrs[li];
      int bsz = bss[bi];
      int64_t start = T0 + DAY + (li * 2 + bi) * 90 * 60000LL;
      snprintf(id, sizeof id, "sweep-lr%g-bs%d", lr, bsz);
      for (char *p = id; *p; p++)
        if (*p == '.')
          *p = 'p';
      snprintf(ref, sizeof ref, "run:%s", id);
      int diverge = lr >= 1.0;
      int live = li == 3 && bi == 1;
      snprintf(cmd, sizeof cmd, "python train.py --config configs/base.yaml --lr %g "
               "--batch-size %d", lr, bsz);
      make_run(L, id, "experiment:lr-sweep", diverge ? "failed" : live ? "running" : "finished",
               start, live ? 0 : start + (diverge ? 9 : 44) * 60000, cmd, li == 5, "exp/lr-sweep");
      attr_f(L, ref, "config/lr", lr);
      attr_i(L, ref, "config/batch_size", bsz);
      attr_s(L, ref, "config/optimizer/name", "sgd");
      attr_f(L, ref, "config/optimizer/momentum", 0.9);
      int64_t bs;
      double best = training_curves(L, ref, lr, 0, 1, diverge ? 43 : 0, start, live ? 350 : 600,
                                    &bs);
      attr_f(L, ref, "summary/best_val_acc", best);
      tag(L, ref, "sweep");
      if (diverge) {
        tag(L, ref, "diverged");
        if (!L->rc)
          L->rc = pmcp_store_run_event(L->s, L->t, ref, "error",
                                       "train/loss became NaN at step 440; stopping", start + 9 * 60000);
      } else if (lr >= 0.3 && !L->rc) {
        L->rc = pmcp_store_run_event(L->s, L->t, ref, "warning",
                                     "loss spike between steps 400 and 900 (no warmup)",
                                     start + 60000);
      }
      snprintf(yaml, sizeof yaml, "model: resnet18\nepochs: 30\nlr: %g\nbatch_size: %d\n"
               "optimizer:\n  name: sgd\n  momentum: 0.9\n  weight_decay: 0.0005\n"
               "schedule: cosine\naugment: [crop, flip]\n", lr, bsz);
      artifact(L, "config.yaml", ref, "configs/run.yaml", yaml, NULL, 0, NULL, NULL,
               "the resolved training config", start);
      for (int k = 1; k <= 3 && !diverge && !live; k++)
        put(L, "checkpoint", "{\"run\":\"%s\",\"step\":%d,\"stored\":%s,\"uri\":\"s3://example-"
            "lab-ckpt/cifar/%s/step%d.pt\",\"size\":44781234}", id, k * 2000,
            k == 3 ? "true" : "false", id, k * 2000);
      if (!diverge && !live)
        put(L, "checkpoint", "{\"run\":\"%s\",\"step\":%lld,\"best\":true,\"stored\":true,\"uri\":"
            "\"s3://example-lab-ckpt/cifar/%s/best.pt\",\"metric\":\"val/acc\",\"value\":%.4f}",
            id, (long long)bs, id, best);
      put(L, "run-use", "{\"run\":\"%s\",\"uses\":\"dataset:cifar10@v2\"}", id);
      if (best > best_acc && !diverge && !live) {
        best_acc = best;
        best_run_step = bs;
        snprintf(best_run, sizeof best_run, "%s", id);
      }
    }
  if (L->rc || !best_run[0])
    return;
  snprintf(ref, sizeof ref, "run:%s", best_run);
  tag(L, ref, "best");
  artifact(L, "model.pt", ref, "outputs/model.pt", NULL, "s3://example-lab-ckpt/cifar/best/model.pt",
           44781234, "5f2b9c0d7e11a4c3b8d6e0f9a7c5b3d1e2f4a6b8c0d2e4f6a8b0c2d4e6f8a0b2", "best",
           "weights of the best sweep run", T0 + 2 * DAY);
  artifact(L, "resnet18-cifar10", ref, "export/resnet18-cifar10.onnx", NULL,
           "s3://example-lab-models/resnet18-cifar10/1.onnx", 44810022, NULL, "candidate",
           "ONNX export of the best sweep run", T0 + 2 * DAY);
  char aref[160];
  snprintf(aref, sizeof aref, "artifact:%s.resnet18-cifar10", best_run);
  if (!L->rc)
    L->rc = pmcp_store_artifact_promote(L->s, L->t, aref);
  put(L, "lineage", "{\"from\":\"run:%s\",\"to\":\"checkpoint:%s@best\",\"relation\":\"produced\","
      "\"steps\":[{\"name\":\"train\",\"description\":\"30 epochs, SGD, cosine\"},{\"name\":"
      "\"select\",\"description\":\"highest val/acc\"}]}", best_run, best_run);
  put(L, "lineage", "{\"from\":\"checkpoint:%s@best\",\"to\":\"%s\",\"relation\":\"exported\","
      "\"steps\":[{\"name\":\"export-onnx\",\"description\":\"opset 17\"}]}", best_run, aref);
  put(L, "group", "{\"id\":\"lr-sweep-bs128\",\"name\":\"lr sweep, batch 128\",\"experiment\":"
      "\"lr-sweep\",\"description\":\"the batch-128 half of the grid\",\"runs\":["
      "\"sweep-lr0p003-bs128\",\"sweep-lr0p01-bs128\",\"sweep-lr0p03-bs128\",\"sweep-lr0p1-bs128\","
      "\"sweep-lr0p3-bs128\",\"sweep-lr1-bs128\"]}");
  put(L, "group", "{\"id\":\"lr-sweep-bs256\",\"name\":\"lr sweep, batch 256\",\"experiment\":"
      "\"lr-sweep\",\"runs\":[\"sweep-lr0p003-bs256\",\"sweep-lr0p01-bs256\",\"sweep-lr0p03-bs256\","
      "\"sweep-lr0p1-bs256\",\"sweep-lr0p3-bs256\",\"sweep-lr1-bs256\"]}");
  put(L, "group", "{\"id\":\"seeds\",\"name\":\"baseline seeds\",\"experiment\":\"baseline\","
      "\"runs\":[\"baseline-seed0\",\"baseline-seed1\",\"baseline-seed2\",\"baseline-seed3\"]}");
  /* Warmup ablation, fine-tuned from nothing but compared with the best. */
  static const int warm[] = {0, 500, 1000, 2000};
  for (int w = 0; w < 4 && !L->rc; w++) {
    int64_t start = T0 + 3 * DAY + w * HOUR;
    snprintf(id, sizeof id, "warmup-%d", warm[w]);
    snprintf(ref, sizeof ref, "run:%s", id);
    snprintf(cmd, sizeof cmd, "python train.py --config configs/base.yaml --lr 0.3 "
             "--batch-size 256 --warmup-steps %d", warm[w]);
    make_run(L, id, "experiment:warmup-ablation", "finished", start, start + 45 * 60000, cmd, 0,
             "exp/warmup");
    attr_i(L, ref, "config/warmup_steps", warm[w]);
    int64_t bs;
    double best = training_curves(L, ref, 0.3, warm[w], 1, 0, start, 600, &bs);
    attr_f(L, ref, "summary/best_val_acc", best);
    tag(L, ref, "ablation");
    put(L, "run-use", "{\"run\":\"%s\",\"uses\":\"dataset:cifar10@v2\"}", id);
    put(L, "checkpoint", "{\"run\":\"%s\",\"step\":%lld,\"best\":true,\"uri\":\"s3://example-lab-"
        "ckpt/cifar/%s/best.pt\",\"metric\":\"val/acc\",\"value\":%.4f}", id, (long long)bs, id,
        best);
  }
  (void)best_run_step;
}

static void hpo(lab *L)
{
  make_run(L, "hpo-search", "experiment:hpo", "finished", T0 + 4 * DAY, T0 + 4 * DAY + 6 * HOUR,
           "python hpo.py --trials 12 --sampler random", 0, "main");
  for (int k = 0; k < 12 && !L->rc; k++) {
    double lr = pow(10, -3 + 2.5 * rnd(L)), wd = pow(10, -5 + 2 * rnd(L));
    double score = 0.93 - 0.08 * pow(log10(lr / 0.08), 2) - 0.01 * rnd(L);
    char traj[2048];
    size_t n = 0;
    n += (size_t)snprintf(traj + n, sizeof traj - n, "[");
    for (int e = 0; e < 10; e++)
      n += (size_t)snprintf(traj + n, sizeof traj - n, "%s{\"epoch\":%d,\"val_acc\":%.4f}",
                            e ? "," : "", e + 1, score * (1 - exp(-(e + 1) / 3.0)));
    snprintf(traj + n, sizeof traj - n, "]");
    put(L, "trial", "{\"id\":\"hpo-trial-%02d\",\"run\":\"hpo-search\",\"name\":\"trial %d\","
        "\"params\":{\"lr\":%.5g,\"weight_decay\":%.3g},\"status\":\"%s\",\"score\":%.4f,"
        "\"trajectory\":%s}", k, k, lr, wd, score < 0.8 ? "pruned" : "complete", score, traj);
  }
  attr_i(L, "run:hpo-search", "config/n_trials", 12);
  attr_s(L, "run:hpo-search", "config/sampler", "random");
}

static void rl(lab *L)
{
  char id[64], ref[80];
  for (int r = 0; r < 3 && !L->rc; r++) {
    int64_t start = T0 + 2 * DAY + r * 3 * HOUR;
    snprintf(id, sizeof id, "ppo-seed%d", r);
    snprintf(ref, sizeof ref, "run:%s", id);
    pmcp_run_spec spec = PMCP_RUN_SPEC_INIT;
    spec.id = id;
    spec.experiment = "experiment:ppo";
    spec.status = "finished";
    spec.created_ms = start;
    spec.started_ms = start;
    spec.ended_ms = start + 2 * HOUR;
    spec.command = "python ppo.py --env CartPole-v1 --n-envs 4";
    if (!L->rc)
      L->rc = pmcp_store_run_create(L->s, L->t, &spec, NULL);
    attr_i(L, ref, "config/seed", r);
    attr_f(L, ref, "config/clip_range", 0.2);
    for (int e = 0; e < 4 && !L->rc; e++) {
      char env[8];
      snprintf(env, sizeof env, "%d", e);
      pmcp_label lab_env[1] = {{"env", env}};
      int64_t ret = series(L, ref, "episode/return", lab_env, 1, PMCP_METRIC_FLOAT,
                           PMCP_SCALE_EPISODE);
      int64_t len = series(L, ref, "episode/length", lab_env, 1, PMCP_METRIC_FLOAT,
                           PMCP_SCALE_EPISODE);
      int64_t vl = series(L, ref, "loss/value", lab_env, 1, PMCP_METRIC_FLOAT,
                          PMCP_SCALE_ENV_STEP);
      pmcp_point a[300], b[300], c[400];
      for (int i = 0; i < 300; i++) {
        double ret_v = fmin(500, 20 + 480 / (1 + exp(-(i - 120 - 15 * e) / 25.0)) + 30 * rnd(L));
        a[i] = (pmcp_point){i, start + i * 20000, floor(ret_v)};
        b[i] = (pmcp_point){i, start + i * 20000, floor(ret_v)};
      }
      for (int i = 0; i < 400; i++)
        c[i] = (pmcp_point){(int64_t)i * 512, start + i * 15000,
                            (double)(float)(0.5 * exp(-i / 150.0) + 0.02 * rnd(L))};
      if (!L->rc)
        L->rc = pmcp_store_log(L->s, L->t, ret, a, 300);
      if (!L->rc)
        L->rc = pmcp_store_log(L->s, L->t, len, b, 300);
      if (!L->rc)
        L->rc = pmcp_store_log(L->s, L->t, vl, c, 400);
      /* Environment attributes, versioned by episode: a curriculum moves
       * env 1 to the hard level at episode 200; env 3's gravity is
       * randomised from episode 150. */
      put(L, "env-attribute", "{\"run\":\"%s\",\"env\":\"%d\",\"path\":\"env/seed\","
          "\"value\":%d}", id, e, 1000 * r + e);
      put(L, "env-attribute", "{\"run\":\"%s\",\"env\":\"%d\",\"path\":\"env/level\","
          "\"value\":\"%s\"}", id, e, e < 2 ? "easy" : "hard");
      put(L, "env-attribute", "{\"run\":\"%s\",\"env\":\"%d\",\"path\":"
          "\"physics/gravity\",\"value\":9.8}", id, e);
      put(L, "env-attribute", "{\"run\":\"%s\",\"env\":\"%d\",\"path\":\"env/wrappers\","
          "\"value\":[\"TimeLimit\",\"RecordEpisodeStatistics\"]}", id, e);
      if (e == 1)
        put(L, "env-attribute", "{\"run\":\"%s\",\"env\":\"1\",\"path\":\"env/level\","
            "\"value\":\"hard\",\"episode\":200}", id);
      if (e == 3)
        put(L, "env-attribute", "{\"run\":\"%s\",\"env\":\"3\",\"path\":"
            "\"physics/gravity\",\"value\":%.2f,\"episode\":150}", id, 11.5 + r);
    }
    put(L, "run-use", "{\"run\":\"%s\",\"uses\":\"source:gym-cartpole-v1\"}", id);
    tag(L, ref, "ppo");
  }
}

static void catalog(lab *L)
{
  put(L, "source", "{\"id\":\"hf-cifar10\",\"provider\":\"hf\",\"kind\":\"dataset\",\"uri\":"
      "\"hf://datasets/uoft-cs/cifar10\",\"version\":\"0b2714987fa478483af9968de7c934580d0bb9a2\","
      "\"description\":\"CIFAR-10 on the Hugging Face Hub\"}");
  put(L, "source", "{\"id\":\"cifar10-homepage\",\"provider\":\"url\",\"kind\":\"page\",\"uri\":"
      "\"https://www.cs.toronto.edu/~kriz/cifar.html\",\"description\":\"the dataset's home "
      "page (license, citation)\"}");
  put(L, "source", "{\"id\":\"s3-lab-data\",\"provider\":\"s3\",\"kind\":\"bucket\",\"uri\":"
      "\"s3://example-lab-data/cifar10/\",\"description\":\"the lab's copy, deduplicated\"}");
  put(L, "source", "{\"id\":\"hf-resnet18.a1_in1k\",\"provider\":\"hf\",\"kind\":\"model\",\"uri\":"
      "\"hf://timm/resnet18.a1_in1k\",\"description\":\"ImageNet-pretrained ResNet-18 (timm)\"}");
  put(L, "source", "{\"id\":\"gym-cartpole-v1\",\"provider\":\"gymnasium\",\"kind\":\"environment\","
      "\"uri\":\"gymnasium://CartPole-v1\",\"version\":\"0.29.1\"}");
  put(L, "dataset", "{\"id\":\"cifar10\",\"name\":\"CIFAR-10\",\"project\":\"cifar-resnet\","
      "\"uri\":\"s3://example-lab-data/cifar10/\",\"description\":\"60k 32x32 images in 10 "
      "classes; train 50k / test 10k\"}");
  put(L, "dataset-version", "{\"dataset\":\"cifar10\",\"version\":\"v1\",\"uri\":\"s3://example-"
      "lab-data/cifar10/v1/\",\"rows\":60000,\"size\":178000000,\"sha256\":\"a3b1f4c2e5d6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2\","
      "\"description\":\"as downloaded\"}");
  put(L, "dataset-version", "{\"dataset\":\"cifar10\",\"version\":\"v2\",\"uri\":\"s3://example-"
      "lab-data/cifar10/v2/\",\"rows\":59871,\"size\":177600000,\"description\":\"129 "
      "near-duplicates between train and test removed\"}");
  put(L, "dataset", "{\"id\":\"cifar10-c\",\"name\":\"CIFAR-10-C\",\"project\":\"cifar-resnet\","
      "\"registered\":false,\"uri\":\"s3://example-lab-data/cifar10-c/gaussian_noise.npy\","
      "\"description\":\"corruption benchmark file the robustness eval reads\"}");
  put(L, "dataset", "{\"id\":\"cartpole-rollouts\",\"name\":\"CartPole rollouts\",\"project\":"
      "\"rl-cartpole\",\"uri\":\"s3://example-lab-data/rl/cartpole/\",\"description\":\"expert "
      "rollouts for behaviour cloning warm starts\"}");
  put(L, "dataset-version", "{\"dataset\":\"cartpole-rollouts\",\"rows\":250000}");
  put(L, "lineage", "{\"from\":\"source:hf-cifar10\",\"to\":\"dataset:cifar10@v1\",\"relation\":"
      "\"imported\",\"steps\":[{\"name\":\"download\"},{\"name\":\"verify\",\"description\":"
      "\"md5 of the tarballs\"}]}");
  put(L, "lineage", "{\"from\":\"dataset:cifar10@v1\",\"to\":\"dataset:cifar10@v2\",\"relation\":"
      "\"derived\",\"steps\":[{\"name\":\"dedup\",\"description\":\"perceptual hash, distance < 4"
      "\"},{\"name\":\"upload\",\"description\":\"s3://example-lab-data/cifar10/v2/\"}]}");
  put(L, "lineage", "{\"from\":\"source:s3-lab-data\",\"to\":\"dataset:cifar10@v2\",\"relation\":"
      "\"stored-in\"}");
}

static void notes(lab *L)
{
  pmcp_buf id = PMCP_BUF_INIT;
  note(L, "project:cifar-resnet", "overview", "CIFAR-10 ResNet",
       "# CIFAR-10 ResNet\n\nStatus: baselines done, sweep running.\n\n## Summary\n"
       "(to be written)\n", NULL, "draft", "ana", "cli", T0 + DAY, NULL, NULL);
  note(L, "project:cifar-resnet", "overview", "CIFAR-10 ResNet",
       "# CIFAR-10 ResNet\n\nStatus: baselines done, sweep done except one run.\n\n## Results\n"
       "- baseline: 94.1 +/- 0.2 top-1 over four seeds\n- sweep: lr 0.1-0.3 best; lr 1.0 "
       "diverges at any batch size\n",
       "ResNet-18 reaches 94% on CIFAR-10 with the reference recipe; lr above 0.3 needs warmup.",
       "in-progress", "agent", "agent:claude-code", T0 + 2 * DAY, NULL, NULL);
  note(L, "project:cifar-resnet", "overview", "CIFAR-10 ResNet",
       "# CIFAR-10 ResNet\n\n## Results\n- baseline: 94.1 +/- 0.2 top-1 (4 seeds)\n- sweep: best "
       "lr 0.1 at batch 128; lr 1.0 diverges (NaN by step 440)\n- warmup: 1000 steps removes "
       "the early spike at lr 0.3 and matches the baseline\n\n## Next\nTry label smoothing.\n",
       "ResNet-18 gets 94% top-1; lr 0.3 with 1000 warmup steps is as good as lr 0.1 and trains "
       "faster at batch 256.", "done", "ana", "cli", T0 + 4 * DAY, NULL, NULL);
  note(L, "experiment:lr-sweep", "overview", "lr sweep",
       "# lr sweep\n\nGrid: lr in {0.003 ... 1.0} x batch {128, 256}.\n", NULL, "in-progress", "ben",
       "cli", T0 + DAY + HOUR, NULL, NULL);
  note(L, "experiment:lr-sweep", "overview", "lr sweep",
       "# lr sweep\n\nGrid: lr in {0.003 ... 1.0} x batch {128, 256}.\n\n| lr | bs128 | bs256 |\n"
       "|---|---|---|\n| 0.03 | 92.8 | 92.1 |\n| 0.1 | 93.9 | 93.6 |\n| 0.3 | 93.1 | 93.4 |\n"
       "| 1.0 | NaN | NaN |\n",
       "lr 0.1 is best; lr 1.0 diverges. The bs256/lr0.1 run is still going.", "in-progress",
       "agent", "agent:claude-code (mcp)", T0 + 2 * DAY, NULL, NULL);
  note(L, "experiment:warmup-ablation", "overview", "warmup ablation",
       "# Warmup ablation\n\nAt lr 0.3 / bs 256, 0 warmup shows a loss spike at steps 400-900.\n"
       "500 steps halves it; 1000 and 2000 remove it.\n",
       "Use 1000 warmup steps above lr 0.1.", "done", "ana", "cli", T0 + 3 * DAY + 6 * HOUR, NULL,
       NULL);
  note(L, "experiment:baseline", "overview", "baseline",
       "# Baseline\n\nReference recipe from the README, seeds 0-3, 2 GPUs each.\n",
       "94.1 +/- 0.2 top-1.", "done", "ana", "cli", T0 + 6 * HOUR, NULL, NULL);
  note(L, "project:rl-cartpole", "overview", "CartPole PPO",
       "# CartPole PPO\n\nAll three seeds solve CartPole (return 500) within 200 episodes; env 3\n"
       "is consistently slowest because it starts with the longest pole.\n",
       "Solved in < 200 episodes on every seed.", "done", "chen", "cli", T0 + 3 * DAY, NULL, NULL);
  note(L, "run:sweep-lr1-bs128", "note", "Divergence",
       "Loss goes to 1e6 at step 430 and NaN after. Gradient norm was already 40x the baseline at "
       "step 300. Not worth rerunning without warmup or clipping.", NULL, NULL, "ben", "cli",
       T0 + DAY + 12 * 90 * 60000LL, NULL, NULL);
  note(L, "run:baseline-seed2", "note", "Slow node",
       "This seed ran on gpu-node-03 which throttled; wall time is 20% longer, results are fine.",
       NULL, NULL, "ana", "cli", T0 + 10 * HOUR, NULL, NULL);
  note(L, "run:sweep-lr0p1-bs256", "handoff", "Hand-off: live sweep run",
       "This run is still training (step ~3500 of 6000). If it ends below 93.5, rerun with "
       "--grad-clip 1.0. The config is in its config.yaml artifact; data is dataset:cifar10@v2.",
       NULL, NULL, "ben", "cli", T0 + 2 * DAY, NULL, &id);
  char parent[128];
  snprintf(parent, sizeof parent, "note:%s", id.ptr ? id.ptr : "");
  note(L, "run:sweep-lr0p1-bs256", "sub-note", "clip", "Clip at 1.0 matches what warmup-1000 "
       "does to the spike; see experiment:warmup-ablation.", NULL, NULL, "ben", "cli",
       T0 + 2 * DAY + 60000, parent, NULL);
  note(L, "run:sweep-lr0p1-bs256", "sub-note", "checkpoints", "Checkpoints every 2000 steps to "
       "s3://example-lab-ckpt/cifar/sweep-lr0p1-bs256/.", NULL, NULL, "ben", "cli",
       T0 + 2 * DAY + 120000, parent, NULL);
  note(L, NULL, "team", "Team note",
       "# Team conventions\n\n- Log the learning rate as `lr` and configs under `config/`.\n"
       "- Every run names its dataset version (dataset:NAME@VERSION).\n", NULL, NULL, "ana", "cli",
       T0, NULL, NULL);
  note(L, NULL, "team", "Team note",
       "# Team conventions\n\n- Log the learning rate as `lr` and configs under `config/`.\n"
       "- Every run names its dataset version (dataset:NAME@VERSION).\n- Promote exported models "
       "to the shared level (`probe artifact promote`); never reuse a label for two versions.\n"
       "- GPU quota: see the shared gpu-quota.csv.\n", NULL, NULL, "chen", "cli", T0 + 3 * DAY,
       NULL, NULL);
  pmcp_buf_dispose(&id);
}

static void artifacts_files_sessions(lab *L)
{
  artifact(L, "tokenizer", NULL, "tokenizer/vocab.json",
           "{\"version\":1,\"vocab_size\":32000,\"merges\":\"bpe-v1\"}\n", NULL, 0, NULL, "legacy",
           "the lab's shared BPE tokenizer", T0 - 30 * DAY);
  artifact(L, "tokenizer", NULL, "tokenizer/vocab.json",
           "{\"version\":2,\"vocab_size\":32000,\"merges\":\"bpe-v2\",\"lowercase\":false}\n", NULL,
           0, NULL, "staging", NULL, T0 - 10 * DAY);
  artifact(L, "tokenizer", NULL, "tokenizer/vocab.json",
           "{\"version\":3,\"vocab_size\":48000,\"merges\":\"bpe-v3\",\"lowercase\":false,"
           "\"byte_fallback\":true}\n", NULL, 0, NULL, "prod", NULL, T0);
  if (!L->rc)
    L->rc = pmcp_store_artifact_label(L->s, L->t, "artifact:tokenizer", 3, "staging");
  artifact(L, "eval-harness", NULL, "eval/harness.yaml",
           "suites: [cifar10-test, cifar10-c]\nmetrics: [top1, ece]\nbatch_size: 512\n", NULL, 0,
           NULL, "v-current", "the lab's evaluation config", T0 + DAY);
  artifact(L, "train.log", "run:sweep-lr1-bs128", "logs/train.log",
           "step 0 loss 2.3912 lr 1.0\nstep 100 loss 2.8123 lr 1.0\nstep 200 loss 5.0912 lr 1.0\n"
           "step 300 loss 41.22 grad_norm 388.1\nstep 430 loss 1000000.0\nstep 440 loss nan\n"
           "ERROR: loss is NaN, stopping\n", NULL, 0, NULL, NULL, "stdout of the run", T0 + DAY);
  artifact(L, "report.md", "experiment:warmup-ablation", "reports/warmup.md",
           "# Warmup ablation report\n\n| warmup | best val/acc |\n|---|---|\n| 0 | 0.931 |\n"
           "| 500 | 0.934 |\n| 1000 | 0.939 |\n| 2000 | 0.938 |\n", NULL, 0, NULL, "final",
           "the ablation's write-up", T0 + 3 * DAY + 7 * HOUR);
  put(L, "file", "{\"path\":\"onboarding.md\",\"content\":\"# Welcome to the lab\\n\\nStart with "
      "the team note, then browse project:cifar-resnet. Ask in #ml-infra for store access.\\n\"}");
  put(L, "file", "{\"path\":\"conventions.md\",\"content\":\"# Conventions\\n\\nRuns are named "
      "EXPERIMENT-KNOB-VALUE; configs are logged under config/.\\n\"}");
  put(L, "file", "{\"path\":\"gpu-quota.csv\",\"media_type\":\"text/csv\",\"content\":\"team,gpus,"
      "hours_per_week\\nvision,16,2000\\nrl,8,900\\n\"}");
  put(L, "file", "{\"path\":\"roadmap.md\",\"workspace\":\"vision\",\"content\":\"# Vision "
      "roadmap\\n\\nQ2: CIFAR baselines (done), ImageNet-100 next.\\n\"}");
  put(L, "file", "{\"path\":\"env-notes.md\",\"workspace\":\"rl\",\"content\":\"CartPole-v1 "
      "caps episodes at 500 steps; returns above 475 count as solved.\\n\"}");
  put(L, "file", "{\"path\":\"datasets/cifar10-card.md\",\"workspace\":\"vision\",\"uri\":"
      "\"s3://example-lab-data/cifar10/README.md\"}");
  put(L, "session", "{\"id\":\"sess-divergence\",\"title\":\"Why did the lr 1.0 runs diverge?\","
      "\"agent\":\"claude-code\",\"started\":%lld,\"ended\":%lld,\"on\":[\"experiment:lr-sweep\","
      "\"run:sweep-lr1-bs128\",\"run:sweep-lr1-bs256\"],\"transcript\":["
      "{\"role\":\"user\",\"content\":\"Why did the lr=1.0 runs fail?\"},"
      "{\"role\":\"assistant\",\"content\":\"Both hit NaN near step 440. train/loss climbs from "
      "step 100, and the train.log artifact shows grad_norm 388 at step 300 - no warmup, no "
      "clipping.\"},{\"role\":\"user\",\"content\":\"Would warmup fix it?\"},"
      "{\"role\":\"assistant\",\"content\":\"At lr 0.3 the warmup ablation removed the spike "
      "with 1000 steps; lr 1.0 was not tried with warmup. I would add it to the next sweep.\"}]}",
      T0 + 2 * DAY, T0 + 2 * DAY + 20 * 60000);
  put(L, "session", "{\"id\":\"sess-warmup-summary\",\"title\":\"Summarize the warmup ablation\","
      "\"agent\":\"claude-code\",\"started\":%lld,\"on\":[\"experiment:warmup-ablation\"],"
      "\"transcript\":[{\"role\":\"user\",\"content\":\"Summarize warmup-ablation for the "
      "overview.\"},{\"role\":\"assistant\",\"content\":\"1000 warmup steps remove the early "
      "spike and give the best accuracy (0.939); 2000 is no better.\"}]}", T0 + 3 * DAY + 6 * HOUR);
  put(L, "session", "{\"id\":\"sess-next-sweep\",\"title\":\"Plan the next sweep\",\"agent\":"
      "\"cursor\",\"started\":%lld,\"on\":[\"project:cifar-resnet\",\"artifact:tokenizer\"],"
      "\"transcript\":[{\"role\":\"user\",\"content\":\"What should the next sweep cover?\"},"
      "{\"role\":\"assistant\",\"content\":\"lr 0.3-1.0 with 1000 warmup steps and label "
      "smoothing 0.1, batch 256, three seeds each.\"}]}", T0 + 4 * DAY + 2 * HOUR);
}

static void papers_links(lab *L)
{
  static const char *ids[] = {"0704.0002", "0704.0046", "0704.0179"};
  pmcp_list_opts lo = PMCP_LIST_OPTS_INIT;
  lo.kind = "paper";
  lo.limit = 1;
  pmcp_buf out = PMCP_BUF_INIT;
  /* Only when the papers index was imported (it is, by probe demo). */
  if (L->rc || pmcp_store_list(L->s, L->t, &lo, &out) != 0 || strstr(out.ptr, "\"total\":0")) {
    pmcp_buf_dispose(&out);
    return;
  }
  pmcp_buf_dispose(&out);
  for (size_t i = 0; i < 3; i++)
    put(L, "paper-link", "{\"project\":\"%s\",\"paper\":\"%s\",\"note\":\"%s\"}",
        i < 2 ? "cifar-resnet" : "rl-cartpole", ids[i],
        i == 0 ? "graph sparsity background for the pruning idea" : "cited in the overview");
}

int probe_demo_lab(pmcp_store *s, pmcp_tenant t)
{
  lab L = {s, t, 0x2545F4914F6CDD1DULL, 0};
  if ((L.rc = pmcp_store_begin(s)))
    return L.rc;
  workspaces_projects(&L);
  catalog(&L);
  cifar_runs(&L);
  hpo(&L);
  rl(&L);
  notes(&L);
  artifacts_files_sessions(&L);
  papers_links(&L);
  if (L.rc) {
    pmcp_store_rollback(s);
    return L.rc;
  }
  return pmcp_store_commit(s);
}
