// SPDX-License-Identifier: MIT
// The tracking toolset driven by the official TypeScript SDK client:
// probe-mcp-stdio --toolset tracking over a store the probe CLI imported
// from an MLflow file store (tests/data/mlflow-adamw), answering seed 001's
// own filter example, "AdamW runs that either used a small learning rate or
// reached a low validation loss". The expected runs are computed here from
// the MLflow files themselves (params/, metrics/, meta.yaml), never from
// the server or the store. Also: a series sort checked against the files,
// offset pages cut by a small token budget, the docs tools, and a refusal.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { binary, connect } from './lib.mjs';
import { MLRUNS, mlflowRuns } from './mlflow.mjs';

const BIN = binary('PROBE_MCP_STDIO');
const CLI = binary('PROBE_CLI');
const HERE = dirname(fileURLToPath(import.meta.url));

const dir = mkdtempSync(join(tmpdir(), 'probe-sdk-tracking-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const store = join(dir, 'store.db');
for (const args of [['init'], ['import', 'mlflow', MLRUNS]])
  execFileSync(CLI, ['--store', store, '--quiet', ...args], { stdio: ['ignore', 'ignore', 'inherit'] });

async function call(c, name, args) {
  const r = await c.callTool({ name, arguments: args });
  const o = JSON.parse(r.content[0].text);
  return { o, isError: !!r.isError };
}

const SEED_FILTER = [
  { attr: 'params/optimizer', op: 'eq', value: 'adamw' },
  { any_of: [
    { attr: 'params/lr', op: 'lt', value: 0.001 },
    { series: 'val/loss', function: 'last', op: 'lt', value: 0.5 },
  ] },
];

test('seed 001 filter example on imported MLflow data, checked against the files', async () => {
  const truth = mlflowRuns();
  const want = truth.filter((r) => r.optimizer === 'adamw' && (r.lr < 0.001 || r.lastLoss < 0.5))
    .map((r) => r.id).sort();
  assert.ok(want.length > 0 && want.length < truth.length, 'the example selects a proper subset');
  const s = await connect(BIN, ['--store', store, '--toolset', 'tracking']);
  try {
    const { tools } = await s.client.listTools();
    const names = tools.map((t) => t.name);
    for (const n of ['list_runs', 'list_docs', 'get_doc']) assert.ok(names.includes(n), n);
    assert.ok(!names.includes('browse'), 'tracking only');

    const { o, isError } = await call(s.client, 'list_runs',
      { filter: SEED_FILTER, limit: 100, columns: ['sys/name', 'params/optimizer', 'params/lr'] });
    assert.ok(!isError, JSON.stringify(o));
    assert.deepEqual(o.rows.map((r) => r['sys/name']).sort(), want);
    assert.equal(o.total_count, want.length);
    assert.equal(o.count, o.rows.length);
    for (const r of o.rows) assert.equal(r['params/optimizer'], 'adamw');

    // sorted by the last validation loss, ascending, with its value shown
    const sorted = await call(s.client, 'list_runs', { filter: SEED_FILTER, limit: 100,
      sort: { series: 'val/loss', function: 'last', direction: 'asc' } });
    const byLoss = truth.filter((r) => want.includes(r.id)).sort((a, b) => a.lastLoss - b.lastLoss);
    assert.deepEqual(sorted.o.rows.map((r) => r['sys/name']), byLoss.map((r) => r.id));
    assert.deepEqual(sorted.o.rows.map((r) => r['last(val/loss)']), byLoss.map((r) => r.lastLoss));

    // pages of one row continue by offset and cover the same answer
    const seen = [];
    let offset = 0;
    for (let i = 0; i < 20 && offset !== undefined; i++) {
      const p = await call(s.client, 'list_runs', { filter: SEED_FILTER, limit: 1, offset });
      seen.push(...p.o.rows.map((r) => r['sys/name']));
      assert.equal(p.o.total_count, want.length);
      offset = p.o.next_offset;
    }
    assert.deepEqual(seen.sort(), want);

    // nesting any_of is refused with a message naming it
    const bad = await call(s.client, 'list_runs', { filter: [{ any_of: [{ any_of: [] }] }] });
    assert.ok(bad.isError);
    assert.match(bad.o.message, /nest/);
  } finally {
    assert.equal(await s.close(), 0);
  }
});

test('docs tools: every page listed, a long page read in pieces that fit', async () => {
  const s = await connect(BIN, ['--store', store, '--toolset', 'tracking']);
  try {
    const { o } = await call(s.client, 'list_docs', { limit: 100 });
    const pages = o.docs.map((d) => d.page);
    const docDir = join(HERE, '..', '..', 'docs', 'agent');
    for (const f of readdirSync(docDir).filter((f) => f.endsWith('.md')))
      assert.ok(pages.includes(f.slice(0, -3)), `${f} is served`);
    let text = '';
    let offset = 0;
    let pieces = 0;
    for (; pieces < 50 && offset !== undefined; pieces++) {
      const p = await call(s.client, 'get_doc', { page: 'filters', token_budget: 512, offset });
      assert.ok(!p.isError, JSON.stringify(p.o));
      text += p.o.markdown;
      offset = p.o.next_offset;
    }
    assert.ok(pieces > 1, 'the page needs several pieces at 512 tokens');
    assert.equal(text, readFileSync(join(docDir, 'filters.md'), 'utf8'));
  } finally {
    assert.equal(await s.close(), 0);
  }
});
