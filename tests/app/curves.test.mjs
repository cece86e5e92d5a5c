// SPDX-License-Identifier: MIT
// The curves MCP App (ui://probe/curves) in a real browser. probe-mcp-stdio
// serves a demo store; this test is the host: it reads the App's page and
// the tool results from the server (raw JSON-RPC over stdio), and a host
// page in headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core) puts the page in a sandboxed frame and talks to it
// through @modelcontextprotocol/ext-apps' AppBridge. What the page drew
// (curves, points, axis range) is checked against the result and the
// store's raw points (query_sql over metric_points); a zoom must send a
// tools/call with the step range through the host, and redraw with the
// answer. Screenshots go to $APP_SCREENSHOTS (meson-logs/app-curves).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const STDIO = process.env.PROBE_MCP_STDIO;
const PROBE = process.env.PROBE_CLI;
const SHOTS = process.env.APP_SCREENSHOTS || path.join(HERE, 'screenshots');
const CHROMIUM = process.env.PMCP_CHROMIUM || '/usr/bin/chromium';
const URI = 'ui://probe/curves';
const RUNS = ['sweep-lr0p003-bs128', 'sweep-lr0p01-bs128'];
const KEY = 'train/loss';

let dir, srv, web, webPort, browser;

// ---- the server: newline-delimited JSON-RPC over stdio ---------------------
function startServer(store) {
  const p = spawn(STDIO, ['--store', store, '--toolset', 'all'], { stdio: ['pipe', 'pipe', 'inherit'] });
  let buf = '', id = 0;
  const waiting = new Map();
  p.stdout.setEncoding('utf8');
  p.stdout.on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (!line.trim()) continue;
      const m = JSON.parse(line);
      const w = waiting.get(m.id);
      if (w) { waiting.delete(m.id); w(m); }
    }
  });
  const rpc = (method, params) => new Promise((resolve) => {
    const n = ++id;
    waiting.set(n, resolve);
    p.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: n, method, params }) + '\n');
  });
  return { rpc, stop: () => { p.stdin.end(); return new Promise((r) => p.on('close', r)); } };
}

async function call(name, args) {
  const m = await srv.rpc('tools/call', { name, arguments: args });
  assert.ok(m.result, `tools/call ${name}: ${JSON.stringify(m.error)}`);
  assert.ok(!m.result.isError, `tools/call ${name}: ${m.result.content?.[0]?.text}`);
  return m.result;
}

// The store's own points: how many each run's series has in [a, b].
async function rawCounts(a, b) {
  const runs = RUNS.map((r) => `'${r}'`).join(',');
  const r = await call('query_sql', { sql: `SELECT r.slug, count(*) FROM metric_points mp
    JOIN series s ON s.id = mp.series_id JOIN runs r ON r.id = s.run_id
    WHERE r.slug IN (${runs}) AND s.key = '${KEY}' AND mp.step BETWEEN ${a} AND ${b}
    GROUP BY r.slug` });
  return Object.fromEntries(r.structuredContent.rows);
}

// ---- the host page and its files -------------------------------------------
function webServer() {
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.json': 'application/json' };
  return new Promise((resolve) => {
    const s = http.createServer((req, res) => {
      const u = new URL(req.url, 'http://x').pathname;
      if (u === '/favicon.ico') { res.writeHead(204); res.end(); return; }
      const rel = u === '/' ? 'host.html' : u.slice(1);
      const file = path.normalize(path.join(HERE, rel));
      const ok = (rel === 'host.html' || rel === 'host.js' ||
                  file.startsWith(path.join(HERE, 'node_modules') + path.sep)) && existsSync(file);
      if (!ok) { res.writeHead(404); res.end(); return; }
      res.writeHead(200, { 'content-type': types[path.extname(file)] || 'application/octet-stream' });
      res.end(readFileSync(file));
    });
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
}

let appPage; // the resource as resources/read gave it
async function openView(tool, args, result) {
  const page = await browser.newPage({ viewport: { width: 820, height: 900 } });
  const calls = [];
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.exposeFunction('pmcpCallTool', async (params) => {
    calls.push(params);
    const m = await srv.rpc('tools/call', params);
    return m.result;
  });
  await page.goto(`http://127.0.0.1:${webPort}/`);
  const toolDef = tools.find((t) => t.name === tool);
  const app = await page.evaluate((o) => window.startView(o),
    { html: appPage.text, meta: appPage._meta, tool: toolDef, args, result });
  assert.equal(app.name, 'probe-curves', 'the view introduced itself in ui/initialize');
  const frame = page.frames().find((f) => f.parentFrame() === page.mainFrame());
  assert.ok(frame, 'the view is in a frame of the host page');
  return { page, frame, calls, errors };
}

async function drawn(frame) {
  return frame.evaluate(() => {
    const svg = document.getElementById('plot');
    const attr = (k) => svg.getAttribute(k);
    const paths = [...svg.querySelectorAll('path.curve')].map((p) => ({
      label: p.getAttribute('data-label'),
      points: Number(p.getAttribute('data-points')),
      vertices: (p.getAttribute('d').match(/[ML]/g) || []).length,
      xs: [...p.getAttribute('d').matchAll(/[ML]([-\d.]+) /g)].map((m) => Number(m[1])),
    }));
    return {
      series: Number(attr('data-series')), points: Number(attr('data-points')),
      xMin: Number(attr('data-x-min')), xMax: Number(attr('data-x-max')),
      yMin: Number(attr('data-y-min')), yMax: Number(attr('data-y-max')),
      scale: attr('data-scale'), zoomCalls: Number(attr('data-zoom-calls')), paths,
      yTicks: [...svg.querySelectorAll('text.ytick')].map((t) => t.textContent),
      status: document.getElementById('status').textContent,
      width: svg.viewBox.baseVal.width,
    };
  });
}

async function shot(page, name) {
  const file = path.join(SHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  assert.ok(statSync(file).size > 2000, `${file} is a real image`);
}

let tools;
before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  dir = mkdtempSync(path.join(tmpdir(), 'app-curves-'));
  const store = path.join(dir, 'store.db');
  execFileSync(PROBE, ['--store', store, 'demo'], { stdio: 'ignore' });
  srv = startServer(store);
  const init = await srv.rpc('initialize', {
    protocolVersion: '2025-11-25',
    capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } },
    clientInfo: { name: 'app-curves-test', version: '1.0.0' },
  });
  srv.init = init.result;
  tools = (await srv.rpc('tools/list', {})).result.tools;
  const read = await srv.rpc('resources/read', { uri: URI });
  assert.ok(read.result, JSON.stringify(read.error));
  appPage = read.result.contents[0];
  web = await webServer();
  webPort = web.address().port;
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
});

after(async () => {
  await browser?.close();
  web?.close();
  await srv?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the server offers the App: extension, tool _meta, resource with its CSP', async () => {
  const ext = srv.init.capabilities.extensions?.['io.modelcontextprotocol/ui'];
  assert.deepEqual(ext, { mimeTypes: ['text/html;profile=mcp-app'] }, 'initialize offers MCP Apps');
  const disc = await srv.rpc('server/discover', { _meta: {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {} } });
  assert.deepEqual(disc.result.capabilities.extensions['io.modelcontextprotocol/ui'], ext,
    'server/discover offers it too');
  for (const name of ['metrics', 'fetch_float_series', 'fetch_float_series_buckets'])
    assert.deepEqual(tools.find((t) => t.name === name)._meta, { ui: { resourceUri: URI } }, name);
  assert.equal(tools.filter((t) => t._meta).length, 3, 'only the curve tools point at the App');
  const listed = (await srv.rpc('resources/list', {})).result.resources.find((r) => r.uri === URI);
  assert.equal(listed.mimeType, 'text/html;profile=mcp-app');
  assert.equal(appPage.uri, URI);
  assert.equal(appPage.mimeType, 'text/html;profile=mcp-app');
  const csp = appPage._meta.ui.csp;
  assert.deepEqual(csp, { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] });
  assert.deepEqual(listed._meta, appPage._meta, 'resources/list shows the same _meta');
  // Self-contained: nothing loaded from elsewhere, and its own CSP allows
  // exactly its one inline script and one style, by digest.
  const html = appPage.text;
  assert.ok(html.startsWith('<!DOCTYPE html>'));
  assert.doesNotMatch(html, /<script[^>]*\ssrc=|<link\b|@import|url\((?!#)/i);
  const script = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
  const style = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]);
  assert.equal(script.length, 1);
  assert.equal(style.length, 1);
  const sha = (s) => `'sha256-${createHash('sha256').update(s).digest('base64')}'`;
  const meta = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)">/)[1];
  assert.match(meta, /^default-src 'none'; /);
  assert.ok(meta.includes(`script-src ${sha(script[0])};`), 'script allowed by its digest only');
  assert.ok(meta.includes(`style-src ${sha(style[0])};`), 'style allowed by its digest only');
  assert.match(meta, /connect-src 'none'/);
  // A host without Apps gets the result it always got: one JSON text item.
  const r = await call('metrics', { mode: 'series', run_ids: RUNS, keys: [KEY], max_points: 50 });
  assert.equal(r.content.length, 1);
  assert.equal(r.content[0].type, 'text');
  assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent);
  assert.equal(r._meta?.ui, undefined);
});

test('metrics series: drawn, hover, toggle, log scale, and a zoom asks the server for the range', async () => {
  const args = { mode: 'series', run_ids: RUNS, keys: [KEY], max_points: 60 };
  const result = await call('metrics', args);
  const rows = result.structuredContent.series;
  assert.equal(rows.length, 2);
  const { page, frame, calls, errors } = await openView('metrics', args, result);
  await frame.waitForFunction(() => document.getElementById('plot').getAttribute('data-series') === '2');
  let d = await drawn(frame);
  // What it drew is what the result holds.
  const want = rows.map((r) => r.value.filter((v) => Number.isFinite(v)).length);
  assert.deepEqual(d.paths.map((p) => p.points), want);
  assert.deepEqual(d.paths.map((p) => p.vertices), want, 'one vertex per point');
  assert.equal(d.points, want[0] + want[1]);
  const steps = rows.flatMap((r) => r.step);
  assert.equal(d.xMin, Math.min(...steps));
  assert.equal(d.xMax, Math.max(...steps));
  const vals = rows.flatMap((r) => r.value);
  assert.ok(d.yMin <= Math.min(...vals) && d.yMax >= Math.max(...vals), 'y axis holds every value');
  assert.equal(d.scale, 'linear');
  assert.match(d.paths[0].label, /sweep-lr0p003-bs128/);
  await shot(page, 'metrics-series');

  // Hover: the values under the pointer.
  const box = await frame.locator('#plot').boundingBox();
  const plotX = (f) => box.x + (60 + f * (d.width - 74)) * (box.width / d.width);
  await page.mouse.move(plotX(0.5), box.y + 120);
  await frame.waitForSelector('#tip:not([hidden])');
  const tipText = await frame.locator('#tip').textContent();
  assert.match(tipText, /sweep-lr0p003-bs128 · train\/loss: [\d.]+ @ step \d+/);
  const shownStep = Number(tipText.match(/@ step (\d+)/)[1]);
  assert.ok(rows[0].step.includes(shownStep), 'the hovered point is one of the result');

  // Toggle a series off and on.
  await frame.locator('#legend button').nth(1).click();
  d = await drawn(frame);
  assert.equal(d.series, 1);
  assert.equal(d.points, want[0]);
  await frame.locator('#legend button').nth(1).click();
  assert.equal((await drawn(frame)).series, 2);

  // Log scale: ticks are powers of ten.
  await frame.locator('#scale').click();
  d = await drawn(frame);
  assert.equal(d.scale, 'log');
  assert.ok(d.yTicks.length >= 2, `log ticks ${d.yTicks}`);
  for (const t of d.yTicks) {
    const v = Number(t), m = v / 10 ** Math.floor(Math.log10(v) + 1e-9);
    assert.ok(Math.abs(m - Math.round(m)) < 1e-6 && m >= 1 && m <= 9, `log tick ${t} is a digit times a power of ten`);
  }
  const ly = d.yTicks.map(Number);
  assert.ok(ly.every((v, i) => !i || v > ly[i - 1]), 'increasing');
  await frame.locator('#scale').click();
  assert.equal((await drawn(frame)).scale, 'linear');

  // Zoom: drag across 25%..50% of the plot.
  assert.equal(calls.length, 0);
  await page.mouse.move(plotX(0.25), box.y + 150);
  await page.mouse.down();
  await page.mouse.move(plotX(0.4), box.y + 150, { steps: 4 });
  await page.mouse.move(plotX(0.5), box.y + 150, { steps: 4 });
  await page.mouse.up();
  await frame.waitForFunction(() => document.getElementById('plot').getAttribute('data-zoom-calls') === '1');
  assert.ok(calls.length >= 1, 'the zoom went through the host');
  const c = calls[0];
  assert.equal(c.name, 'metrics');
  const a = c.arguments;
  assert.equal(a.mode, 'series');
  assert.deepEqual(a.run_ids, RUNS);
  assert.deepEqual(a.keys, [KEY]);
  assert.ok(Number.isInteger(a.step_from) && Number.isInteger(a.step_to) && a.step_from < a.step_to);
  const span = Math.max(...steps) - Math.min(...steps);
  assert.ok(Math.abs(a.step_from - 0.25 * span) < 0.02 * span, `step_from ${a.step_from}`);
  assert.ok(Math.abs(a.step_to - 0.5 * span) < 0.02 * span, `step_to ${a.step_to}`);
  assert.ok(a.max_points >= 4 && a.max_points <= 2000, `max_points ${a.max_points}`);
  assert.equal(a.token_budget, 8000);
  assert.equal(a.cursor, undefined);
  // Redrawn at full resolution: every raw point of the range, per series.
  const raw = await rawCounts(a.step_from, a.step_to);
  d = await drawn(frame);
  assert.deepEqual(d.paths.map((p) => p.points), RUNS.map((r) => raw[r]));
  assert.deepEqual(d.paths.map((p) => p.vertices), RUNS.map((r) => raw[r]));
  assert.ok(raw[RUNS[0]] > want[0] / 4, 'more points than the overview had in that range');
  assert.equal(d.xMin, a.step_from);
  assert.equal(d.xMax, a.step_to);
  const left = 60 * (d.width / d.width) - 0.5, right = d.width - 14 + 0.5;
  for (const p of d.paths) for (const x of p.xs) assert.ok(x >= left && x <= right, 'inside the plot');
  assert.match(d.status, /from the server/);
  await shot(page, 'metrics-zoomed');
  await page.locator('iframe').screenshot({ path: path.join(SHOTS, 'metrics-zoomed-app.png') });

  // Reset: back to the result.
  await frame.locator('#reset').click();
  d = await drawn(frame);
  assert.deepEqual(d.paths.map((p) => p.points), want);
  assert.deepEqual(errors, [], 'no errors in the page');
  await page.close();
});

test('tracking fetch_float_series: drawn, and a zoom by step inputs asks fetch_float_series', async () => {
  const args = { runs: [RUNS[0]], series: [KEY] };
  const result = await call('fetch_float_series', args);
  const e = result.structuredContent.entries;
  assert.equal(e.length, 1);
  const { page, frame, calls, errors } = await openView('fetch_float_series', args, result);
  await frame.waitForFunction(() => document.getElementById('plot').getAttribute('data-series') === '1');
  let d = await drawn(frame);
  assert.equal(d.points, e[0].value.length);
  assert.equal(d.xMin, Math.min(...e[0].step));
  assert.equal(d.xMax, Math.max(...e[0].step));
  await frame.locator('#from').fill('1000');
  await frame.locator('#to').fill('1500');
  await frame.locator('#zoom').click();
  await frame.waitForFunction(() => document.getElementById('plot').getAttribute('data-zoom-calls') === '1');
  assert.equal(calls[0].name, 'fetch_float_series');
  assert.equal(calls[0].arguments.step_from, 1000);
  assert.equal(calls[0].arguments.step_to, 1500);
  assert.deepEqual(calls[0].arguments.runs, [RUNS[0]]);
  assert.ok(calls[0].arguments.max_points <= 1000);
  const raw = await rawCounts(1000, 1500);
  d = await drawn(frame);
  assert.equal(d.points, raw[RUNS[0]]);
  assert.equal(d.xMin, 1000);
  assert.equal(d.xMax, 1500);
  await shot(page, 'tracking-zoomed');
  assert.deepEqual(errors, [], 'no errors in the page');
  await page.close();
});

test('tracking fetch_float_series_buckets: means with min..max bands; a zoom asks for the range in buckets', async () => {
  const args = { runs: RUNS, series: [KEY], buckets: 20 };
  const result = await call('fetch_float_series_buckets', args);
  const e = result.structuredContent.entries;
  assert.equal(e.length, 2);
  const { page, frame, calls, errors } = await openView('fetch_float_series_buckets', args, result);
  await frame.waitForFunction(() => document.getElementById('plot').getAttribute('data-series') === '2');
  let d = await drawn(frame);
  assert.deepEqual(d.paths.map((p) => p.points), e.map((x) => x.mean.length));
  assert.equal(await frame.locator('#plot polygon').count(), 2, 'a min..max band per curve');
  const allMin = Math.min(...e.flatMap((x) => x.min)), allMax = Math.max(...e.flatMap((x) => x.max));
  assert.ok(d.yMin <= allMin && d.yMax >= allMax, 'the y axis holds the bands');
  await frame.locator('#from').fill('3000');
  await frame.locator('#to').fill('3200');
  await frame.locator('#zoom').click();
  await frame.waitForFunction(() => document.getElementById('plot').getAttribute('data-zoom-calls') === '1');
  const a = calls[0].arguments;
  assert.equal(calls[0].name, 'fetch_float_series_buckets');
  assert.equal(a.step_from, 3000);
  assert.equal(a.step_to, 3200);
  assert.ok(a.buckets >= 2 && a.buckets <= 1000);
  // Buckets narrower than the logging interval hold one point each: every
  // raw point of the range is a bucket mean on the curve.
  const raw = await rawCounts(3000, 3200);
  d = await drawn(frame);
  assert.deepEqual(d.paths.map((p) => p.points), RUNS.map((r) => raw[r]));
  assert.equal(d.xMin, 3000);
  assert.equal(d.xMax, 3200);
  await shot(page, 'tracking-buckets-zoomed');
  assert.deepEqual(errors, [], 'no errors in the page');
  await page.close();
});

test('metrics grouped and points results are drawn too; summaries say there are no curves', async () => {
  const gargs = { mode: 'grouped', run_id: 'baseline-seed0', key: KEY, by: ['rank'], step_bucket: 500 };
  const g = await call('metrics', gargs);
  const groups = g.structuredContent.groups;
  let v = await openView('metrics', gargs, g);
  await v.frame.waitForFunction((n) => document.getElementById('plot').getAttribute('data-series') === String(n),
    groups.length);
  let d = await drawn(v.frame);
  assert.deepEqual(d.paths.map((p) => p.points), groups.map((x) => x.mean.filter((m) => m !== null).length));
  assert.match(d.paths[0].label, /baseline-seed0 · train\/loss \{rank=0\}/);
  await v.page.close();

  const pargs = { mode: 'points', run_id: RUNS[1], key: KEY, step_from: 100, step_to: 400 };
  const p = await call('metrics', pargs);
  v = await openView('metrics', pargs, p);
  await v.frame.waitForFunction(() => document.getElementById('plot').getAttribute('data-series') === '1');
  d = await drawn(v.frame);
  assert.equal(d.points, (await rawCounts(100, 400))[RUNS[1]]);
  await v.page.close();

  const sargs = { mode: 'summaries', run_ids: RUNS, keys: [KEY] };
  v = await openView('metrics', sargs, await call('metrics', sargs));
  await v.frame.waitForFunction(() => /no curves/.test(document.getElementById('status').textContent));
  assert.equal((await drawn(v.frame)).series, 0);
  assert.deepEqual(v.errors, []);
  await v.page.close();
});

test('a zoom over many curves stays within the budget: the App follows next_cursor until every row came', async () => {
  const runs = ['sweep-lr0p003-bs128', 'sweep-lr0p003-bs256', 'sweep-lr0p01-bs128',
                'sweep-lr0p01-bs256', 'sweep-lr0p03-bs128', 'sweep-lr0p03-bs256'];
  const args = { mode: 'series', run_ids: runs, keys: [KEY], max_points: 20, token_budget: 4000 };
  const result = await call('metrics', args);
  const { page, frame, calls, errors } = await openView('metrics', args, result);
  await frame.waitForFunction(() => document.getElementById('plot').getAttribute('data-series') === '6');
  await frame.locator('#from').fill('0');
  await frame.locator('#to').fill('5990');
  await frame.locator('#zoom').click();
  await frame.waitForFunction(() => document.getElementById('plot').getAttribute('data-zoom-calls') === '1');
  assert.ok(calls.length >= 2, `one answer of token_budget 8000 does not hold them all (${calls.length} calls)`);
  assert.equal(calls[0].arguments.cursor, undefined);
  for (const c of calls) assert.equal(c.arguments.token_budget, 8000);
  for (const c of calls.slice(1)) assert.equal(typeof c.arguments.cursor, 'string', 'the next page by cursor');
  const d = await drawn(frame);
  assert.equal(d.series, 6, 'every row drawn once');
  assert.deepEqual(d.paths.map((p) => p.label.split(' ')[0]), runs);
  const per = calls[0].arguments.max_points;
  for (const p of d.paths) assert.ok(p.points <= per && p.points >= Math.min(per, 600) / 2, `${p.points} of ${per}`);
  assert.deepEqual(errors, []);
  await page.close();
});
