// SPDX-License-Identifier: MIT
// The research toolset through probe-mcp-stdio, driven by the official
// TypeScript SDK client, on real data: the MLflow file store in
// tests/data/mlflow-kymatio imported with `probe import mlflow`. Counts are
// compared with an independent reading of the files.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Without `npm ci` in this folder the SDK is missing: skip (exit 77), as
// meson counts it, rather than fail; under CI (CI=true, or PMCP_TEST_STRICT=1
// as .ci/test sets) it is a failure, so the suite never passes vacuously.
if (!existsSync(new URL('./node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url))) {
  const strict = process.env.PMCP_TEST_STRICT;
  if ((strict && strict !== '0') || process.env.CI === 'true') {
    console.error('error: the TypeScript SDK is not installed (npm ci in tests/research-sdk) and PMCP_TEST_STRICT/CI forbids skipping');
    process.exit(1);
  }
  console.log('skipped: the TypeScript SDK is not installed (npm ci in tests/research-sdk)');
  process.exit(77);
}
const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');

const STDIO = process.env.PROBE_MCP_STDIO;
const PROBE = process.env.PROBE_CLI;
const DATA = process.env.PROBE_TEST_DATA;
const mlruns = join(DATA, 'mlflow-kymatio', 'mlruns');
let dir, store, client;

// Independent reading: run folders (a meta.yaml beside params/) per
// experiment folder, and which are deleted.
function readMlruns() {
  const runs = [];
  for (const exp of readdirSync(mlruns)) {
    const ed = join(mlruns, exp);
    if (exp === '.trash' || !existsSync(join(ed, 'meta.yaml'))) continue;
    for (const r of readdirSync(ed)) {
      const meta = join(ed, r, 'meta.yaml');
      if (!existsSync(meta)) continue;
      const m = readFileSync(meta, 'utf8');
      runs.push({ id: r, deleted: /lifecycle_stage:\s*deleted/.test(m) });
    }
  }
  return runs;
}

async function call(name, args) {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(r.content.length, 1, 'one content item');
  const obj = JSON.parse(r.content[0].text);
  assert.deepEqual(r.structuredContent, obj, 'structuredContent mirrors the text');
  return { obj, isError: !!r.isError };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'research-sdk-'));
  store = join(dir, 'store.db');
  execFileSync(PROBE, ['--store', store, '--quiet', 'init']);
  execFileSync(PROBE, ['--store', store, '--quiet', 'import', 'mlflow', mlruns]);
  client = new Client({ name: 'research-sdk-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: STDIO, args: ['--store', store] }));
});

after(async () => {
  await client?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('tools/list: browse, entity, search, all read-only', async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  for (const n of ['browse', 'entity', 'search']) assert.ok(names.includes(n), n);
  for (const t of tools) assert.equal(t.annotations?.readOnlyHint, true, t.name);
  const browse = tools.find((t) => t.name === 'browse');
  assert.ok(browse.inputSchema.properties.token_budget, 'budgeted');
});

test('browse runs: every imported run, deleted ones hidden unless asked', async () => {
  const truth = readMlruns();
  const live = truth.filter((r) => !r.deleted).length;
  let { obj } = await call('browse', { mode: 'runs', limit: 100 });
  assert.equal(obj.total, live);
  assert.equal(obj.runs.length, live);
  ({ obj } = await call('browse', { mode: 'runs', limit: 100, include_deleted: true }));
  assert.equal(obj.total, truth.length);
  const ids = obj.runs.map((r) => r.ref.replace(/^run:mlflow-/, '')).sort();
  assert.deepEqual(ids, truth.map((r) => r.id).sort());
  // newest first
  const times = obj.runs.map((r) => r.created);
  assert.deepEqual([...times].sort().reverse(), times);
});

test('browse runs at 512 tokens pages without losing or repeating a run', async () => {
  const truth = readMlruns();
  const seen = [];
  let cursor;
  let pages = 0;
  do {
    const args = { mode: 'runs', limit: 100, include_deleted: true, token_budget: pages % 2 ? 512 : 600 };
    if (cursor) args.cursor = cursor;
    const { obj, isError } = await call('browse', args);
    assert.equal(isError, false, JSON.stringify(obj));
    for (const r of obj.runs) seen.push(r.ref);
    cursor = obj.next_cursor;
    pages++;
  } while (cursor && pages < 50);
  assert.equal(new Set(seen).size, seen.length, 'no repeats');
  assert.equal(seen.length, truth.length, 'nothing lost');
  assert.ok(pages > 1, 'several pages');
});

test('browse tree and entity card/record/notes on a real run', async () => {
  let { obj } = await call('browse', {});
  assert.equal(obj.mode, 'tree');
  assert.ok(obj.projects.length >= 1);
  const exp = obj.projects[0].experiments[0];
  ({ obj } = await call('browse', { ref: exp.ref, limit: 1 }));
  const run = obj.runs[0].ref;
  ({ obj } = await call('entity', { refs: [run] }));
  assert.equal(obj.ref, run);
  assert.ok(obj.available_views.includes('record'));
  // a param, read by field path, equals the file
  const id = run.replace(/^run:mlflow-/, '');
  const expDir = readdirSync(mlruns).find((e) => existsSync(join(mlruns, e, id)));
  const bs = readFileSync(join(mlruns, expDir, id, 'params', 'batch_size'), 'utf8').trim();
  ({ obj } = await call('entity', { refs: [run], view: 'record',
    view_options: { field: 'attributes.params.batch_size' } }));
  assert.equal(String(obj.data), bs);
  assert.equal(obj.provenance, 'import');
  ({ obj } = await call('entity', { refs: [run], view: 'notes' }));
  assert.ok(Array.isArray(obj.notes));
});

test('entity content of an imported text artifact, in sections with grep', async () => {
  const truth = readMlruns().find((r) => {
    const e = readdirSync(mlruns).find((x) => existsSync(join(mlruns, x, r.id, 'artifacts', 'model', 'conda.yaml')));
    return !!e;
  });
  assert.ok(truth, 'a run with model/conda.yaml');
  const run = `run:mlflow-${truth.id}`;
  let { obj } = await call('entity', { refs: [run], view: 'artifacts' });
  const art = obj.artifacts.find((a) => a.name === 'model/conda.yaml');
  assert.ok(art, 'conda.yaml listed');
  ({ obj } = await call('entity', { refs: [art.ref], view: 'content' }));
  const e = readdirSync(mlruns).find((x) => existsSync(join(mlruns, x, truth.id)));
  const text = readFileSync(join(mlruns, e, truth.id, 'artifacts', 'model', 'conda.yaml'), 'utf8');
  assert.equal(obj.total_lines, text.split('\n').filter((l, i, a) => i < a.length - 1 || l).length);
  assert.equal(obj.start_line, 1);
  assert.ok(text.startsWith(obj.text.slice(0, 20)));
  ({ obj } = await call('entity', { refs: [art.ref], view: 'content',
    view_options: { grep: 'python', context_lines: 1 } }));
  assert.ok(obj.match_count >= 1);
});

test('search: keyword and exact channels with provenance; unknown kinds refused', async () => {
  let { obj } = await call('search', { query: 'batch_size' });
  assert.ok(obj.results.length > 0);
  for (const r of obj.results) {
    assert.ok(['exact', 'keyword'].includes(r.channel));
    assert.ok(r.provenance);
    assert.match(r.ref, /^[a-z-]+:/);
  }
  assert.match(obj.channels.semantic, /no model calls/);
  const id = readMlruns()[0].id;
  ({ obj } = await call('search', { query: `mlflow-${id}` }));
  assert.equal(obj.results[0].channel, 'exact');
  let r = await call('entity', { refs: [`model:${id}`] });
  assert.equal(r.isError, true);
  assert.match(r.obj.message, /unknown kind/);
});

test('resources and prompts', async () => {
  const id = readMlruns().find((r) => !r.deleted).id;
  const res = await client.readResource({ uri: `probe://run/mlflow-${id}` });
  assert.match(res.contents[0].text, /available_views/);
  const { prompts } = await client.listPrompts();
  assert.ok(prompts.find((p) => p.name === 'compare_runs'));
  const p = await client.getPrompt({ name: 'reproduce_run', arguments: { run: `run:mlflow-${id}` } });
  assert.match(p.messages[0].content.text, /view=reproduce/);
});

test('semantic=false makes no model calls, even with an endpoint configured', async () => {
  const { createServer } = await import('node:http');
  let requests = 0;
  const srv = createServer((req, res) => {
    requests++;
    // an OpenAI-compatible embeddings answer, should anything ask
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: [1, 0, 0] }] }));
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${srv.address().port}/v1/embeddings`;
  const c = new Client({ name: 'research-sdk-embed', version: '1.0.0' });
  await c.connect(new StdioClientTransport({ command: STDIO, args: ['--store', store, '--embed-url', url] }));
  try {
    const r = await c.callTool({ name: 'search', arguments: { query: 'batch_size', semantic: false } });
    const o = JSON.parse(r.content[0].text);
    assert.ok(o.results.length > 0);
    assert.match(o.channels.semantic, /no model calls/);
    assert.equal(requests, 0, 'semantic=false contacted the embeddings endpoint');
    // semantic=true says whether the channel is on, and why not
    const r2 = await c.callTool({ name: 'search', arguments: { query: 'batch_size', semantic: true } });
    const o2 = JSON.parse(r2.content[0].text);
    assert.match(o2.channels.semantic, /^off: /);
    assert.ok(o2.results.every((x) => x.channel !== 'semantic'), 'nothing pretends to be semantic');
  } finally {
    await c.close();
    srv.close();
  }
});

test('semantic=true without an endpoint says the channel is off and why', async () => {
  const { obj } = await call('search', { query: 'batch_size', semantic: true });
  assert.match(obj.channels.semantic, /no embeddings endpoint is configured/);
});

test('probe embed caches vectors; semantic=true ranks by them with one model call', async () => {
  const { createServer } = await import('node:http');
  const { execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  // A small deterministic embedder: words hashed into 64 dimensions.
  const embed = (text) => {
    const v = new Array(64).fill(0);
    for (const w of String(text).toLowerCase().match(/[a-z0-9_]+/g) || []) {
      let h = 0;
      for (const ch of w) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
      v[h % 64] += 1;
    }
    return v;
  };
  let requests = 0;
  let inputs = 0;
  const srv = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      requests++;
      const r = JSON.parse(body);
      inputs += r.input.length;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ object: 'list', model: r.model,
        data: r.input.map((t, i) => ({ object: 'embedding', index: i, embedding: embed(t) })) }));
    });
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${srv.address().port}/v1/embeddings`;
  try {
    const { stdout } = await promisify(execFile)(PROBE, ['--store', store, '--quiet', 'embed', '--url', url]);
    const n = Number(stdout.trim());
    assert.ok(n > 0 && inputs === n, `embedded ${n}, endpoint saw ${inputs}`);
    // a second run sends nothing: the vectors are cached
    const again = await promisify(execFile)(PROBE, ['--store', store, '--quiet', 'embed', '--url', url]);
    assert.equal(Number(again.stdout.trim()), 0);
    const c = new Client({ name: 'research-sdk-semantic', version: '1.0.0' });
    await c.connect(new StdioClientTransport({ command: STDIO, args: ['--store', store, '--embed-url', url] }));
    try {
      const before = requests;
      let r = await c.callTool({ name: 'search', arguments: { query: 'learning rate schedule', semantic: false } });
      assert.equal(requests, before, 'semantic=false made a model call');
      r = await c.callTool({ name: 'search', arguments: { query: 'learning rate schedule', semantic: true } });
      const o = JSON.parse(r.content[0].text);
      assert.equal(requests, before + 1, 'one model call for the query');
      assert.equal(typeof o.channels.semantic, 'number');
      const sem = o.results.filter((x) => x.channel === 'semantic');
      assert.ok(sem.length > 0, 'semantic results');
      for (const x of sem) {
        assert.match(x.ref, /^[a-z-]+:/);
        assert.ok(x.similarity > 0 && x.similarity <= 1);
        assert.ok(x.provenance);
      }
    } finally {
      await c.close();
    }
  } finally {
    srv.close();
  }
});
