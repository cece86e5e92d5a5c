// SPDX-License-Identifier: MIT
// The truth of the tracking tests: the live runs of an MLflow file store,
// read from its files (params/, metrics/, meta.yaml), never from a server.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MLRUNS = join(dirname(fileURLToPath(import.meta.url)), '..', 'data', 'mlflow-adamw', 'mlruns');

// Each live run: { id, optimizer, lr, lastLoss } where lastLoss is val/loss
// at the highest step (ties: the latest time).
export function mlflowRuns(mlruns = MLRUNS) {
  const runs = [];
  for (const exp of readdirSync(mlruns)) {
    const ed = join(mlruns, exp);
    if (!existsSync(join(ed, 'meta.yaml'))) continue;
    for (const id of readdirSync(ed)) {
      const rd = join(ed, id);
      if (!existsSync(join(rd, 'params'))) continue;
      if (/^lifecycle_stage: deleted$/m.test(readFileSync(join(rd, 'meta.yaml'), 'utf8'))) continue;
      const param = (k) => readFileSync(join(rd, 'params', k), 'utf8').trim();
      const rows = readFileSync(join(rd, 'metrics', 'val', 'loss'), 'utf8').trim().split('\n')
        .map((l) => l.trim().split(/\s+/).map(Number))
        .sort((a, b) => a[2] - b[2] || a[0] - b[0]);
      runs.push({ id, optimizer: param('optimizer'), lr: Number(param('lr')),
        lastLoss: rows[rows.length - 1][1] });
    }
  }
  return runs;
}
