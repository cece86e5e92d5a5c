// SPDX-License-Identifier: MIT
// HTTP benchmark: tools/call `echo` over Streamable HTTP, 50 keep-alive
// clients (build/tests/http/http-load), JSON replies, against our transport
// (build/tests/http/http-testserver) and the TypeScript SDK server
// (sdk-server.mjs) with the same tool, in the same run. For each server: its
// own CPU time per call (utime+stime from /proc/PID/stat around the run),
// calls/s, p50/p99 latency; our idle RSS (VmRSS after start and after the
// run). Prints the ratios. Not a test: it prints figures.
// Our server is measured in both protocol eras on the same endpoint: the
// 2025-11-25 era (a session per connection, initialize first) and the
// 2026-07-28 era (no session, every call self-contained with its _meta and
// headers: http-load --era modern), in alternating rounds, and the modern
// era's server CPU per call is compared with the legacy era's, side by side
// for handlers on a thread and on the loop. CPU is the server's time on CPU
// summed over its threads (/proc/PID/task/*/schedstat, ns).
// With --callgrind the four configurations run once each under callgrind
// instead (no SDK peer): instructions per call after a warm-up, which the
// machine's load does not change, and their modern / legacy ratios.
//
//   node tests/bench/http/run.mjs BUILD_DIR [CALLS] [ROUNDS] [--callgrind]
//   (default 30000 calls, 3 rounds; --callgrind: 10000 calls)
import { spawn, execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as cg from '../callgrind.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const CALLGRIND = process.argv.includes('--callgrind');
const pos = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const build = path.resolve(pos[0] ?? 'build');
const calls = Number(pos[1] ?? (CALLGRIND ? 10000 : 30000));
const ROUNDS = Math.max(1, Number(pos[2] ?? 3));
const CONNS = 50;
const load = path.join(build, 'tests/http/http-load');

function start(cmd, args) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on http:\/\/[^:]+:(\d+)/);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.on('exit', (c) => reject(new Error(`${cmd} exited ${c}`)));
  });
}

// The process's time on CPU in seconds, all its threads (ns resolution;
// utime/stime in /proc/PID/stat tick at 10 ms, a few ticks per run).
function cpuSeconds(pid) {
  let ns = 0;
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
    } catch { /* the thread ended */ }
  }
  return ns / 1e9;
}

function rssKb(pid) {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(s.match(/VmRSS:\s+(\d+)/)[1]);
}

function runLoad(port, n, era) {
  return new Promise((resolve, reject) => {
    execFile(load, ['--port', String(port), '--conns', String(CONNS), '--requests', String(n),
      ...(era ? ['--era', era] : [])],
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${stdout}${stderr}`));
        else resolve(Object.fromEntries(stdout.trim().split(' ').map((kv) => kv.split('=')).map(([k, v]) => [k, Number(v)])));
      });
  });
}

async function bench(name, cmd, args, era) {
  const { child, port } = await start(cmd, args);
  await new Promise((r) => setTimeout(r, 300));
  const idle = rssKb(child.pid);
  await runLoad(port, Math.min(2000, calls), era); // warm-up (JIT, caches)
  const t0 = cpuSeconds(child.pid);
  const r = await runLoad(port, calls, era);
  const cpu = cpuSeconds(child.pid) - t0;
  await new Promise((res) => setTimeout(res, 300));
  const after = rssKb(child.pid);
  child.kill('SIGTERM');
  await new Promise((res) => child.on('exit', res));
  const res = { name, calls: r.calls, errors: r.errors, cps: r.calls_per_s, p50: r.p50_ms, p99: r.p99_ms,
    cpuUsPerCall: (cpu * 1e6) / r.calls, idleRssKb: idle, afterRssKb: after };
  console.log(`${name.padEnd(10)} calls=${res.calls} errors=${res.errors} calls/s=${res.cps} ` +
    `p50=${res.p50.toFixed(3)}ms p99=${res.p99.toFixed(3)}ms server_cpu/call=${res.cpuUsPerCall.toFixed(1)}us ` +
    `rss_idle=${idle}kB rss_after=${after}kB`);
  return res;
}

const server = path.join(build, 'tests/http/http-testserver');

// One configuration under callgrind: instructions per call of the server
// (all its threads) over CALLS calls after a warm-up.
async function instructionsPerCall(args, era) {
  const files = cg.profiles();
  const out = files.next();
  const [vg, ...vgArgs] = cg.valgrind(out);
  const { child, port } = await start(vg, [...vgArgs, server, ...args]);
  try {
    await runLoad(port, Math.min(1000, calls), era);
    cg.zero(child.pid);
    await runLoad(port, calls, era);
    return cg.dump(child.pid, out) / calls;
  } finally {
    child.kill('SIGTERM');
    await new Promise((res) => child.on('exit', res));
    files.done();
  }
}

if (CALLGRIND) {
  if (!cg.available()) {
    console.error('run.mjs --callgrind: valgrind and callgrind_control are needed');
    process.exit(2);
  }
  console.log(`instructions per call (callgrind, ${calls} calls on ${CONNS} connections after a warm-up):`);
  console.log('                        legacy      modern   modern / legacy');
  let worst = 0;
  for (const [name, args] of [['handlers on a thread', []], ['handlers on the loop', ['--handler-threads', '0']]]) {
    const l = await instructionsPerCall(['--listen', '127.0.0.1:0', ...args]);
    const m = await instructionsPerCall(['--listen', '127.0.0.1:0', ...args], 'modern');
    worst = Math.max(worst, m / l);
    console.log(`${name.padEnd(20)} ${(l / 1000).toFixed(2).padStart(9)}k ${(m / 1000).toFixed(2).padStart(10)}k   ${cg.verdict(m / l)}`);
  }
  console.log(`${worst <= 1.10 ? 'met ' : 'MISS'}  modern / legacy instructions per call <= 1.10 in both configurations (worst ${worst.toFixed(3)})`);
  process.exit(0);
}

const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
// Default: handlers on a handler thread. "inline": --handler-threads 0.
// Each round runs every configuration in turn, so a change of load on this
// shared machine hits both eras alike; the ratios are medians of the
// rounds' ratios.
const rounds = [];
for (let k = 0; k < ROUNDS; k++) {
  console.log(`round ${k + 1} of ${ROUNDS} (load average ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]})`);
  const r = {};
  r.legacy = await bench('legacy', server, ['--listen', '127.0.0.1:0']);
  r.modern = await bench('modern', server, ['--listen', '127.0.0.1:0'], 'modern');
  r.inlineLegacy = await bench('inl-legacy', server, ['--listen', '127.0.0.1:0', '--handler-threads', '0']);
  r.inlineModern = await bench('inl-modern', server, ['--listen', '127.0.0.1:0', '--handler-threads', '0'], 'modern');
  rounds.push(r);
}
const sdk = await bench('ts-sdk', process.execPath, [path.join(here, 'sdk-server.mjs')]);
const med = (f) => median(rounds.map(f));
const ours = { cpuUsPerCall: med((r) => r.legacy.cpuUsPerCall), cps: med((r) => r.legacy.cps),
  p50: med((r) => r.legacy.p50), p99: med((r) => r.legacy.p99),
  idleRssKb: med((r) => r.legacy.idleRssKb), afterRssKb: med((r) => r.legacy.afterRssKb) };
const modernCpu = med((r) => r.modern.cpuUsPerCall);
const eraRatio = med((r) => r.modern.cpuUsPerCall / r.legacy.cpuUsPerCall);
const eraRatioInline = med((r) => r.inlineModern.cpuUsPerCall / r.inlineLegacy.cpuUsPerCall);
const inline = { cpuUsPerCall: med((r) => r.inlineLegacy.cpuUsPerCall) };
console.log(`server CPU per call (median of ${ROUNDS} rounds): legacy era ${ours.cpuUsPerCall.toFixed(1)}us, ` +
  `modern era ${modernCpu.toFixed(1)}us; handlers on the loop: legacy ${inline.cpuUsPerCall.toFixed(1)}us, ` +
  `modern ${med((r) => r.inlineModern.cpuUsPerCall).toFixed(1)}us`);
console.log(`${eraRatio <= 1.10 ? 'met ' : 'MISS'}  modern / legacy server CPU per call: ${eraRatio.toFixed(3)} ` +
  `(handlers on the loop: ${eraRatioInline.toFixed(3)}; target <= 1.10)`);
console.log(`ratio server CPU per call (sdk/ours): ${(sdk.cpuUsPerCall / ours.cpuUsPerCall).toFixed(1)}x (target >= 20x); ` +
  `with handlers on the loop: ${(sdk.cpuUsPerCall / inline.cpuUsPerCall).toFixed(1)}x`);
console.log(`ratio server CPU per call (sdk/ours), modern era: ${(sdk.cpuUsPerCall / modernCpu).toFixed(1)}x; ` +
  `handlers on the loop: ${(sdk.cpuUsPerCall / med((r) => r.inlineModern.cpuUsPerCall)).toFixed(1)}x ` +
  `(zod ${JSON.parse(readFileSync(path.join(here, 'node_modules/zod/package.json'), 'utf8')).version})`);
console.log(`ratio calls/s (ours/sdk): ${(ours.cps / sdk.cps).toFixed(1)}x`);
console.log(`ratio p50 latency (sdk/ours): ${(sdk.p50 / ours.p50).toFixed(1)}x, p99: ${(sdk.p99 / ours.p99).toFixed(1)}x`);
console.log(`our idle RSS: ${(ours.idleRssKb / 1024).toFixed(1)} MB after start, ${(ours.afterRssKb / 1024).toFixed(1)} MB after the run (target < 10 MB)`);
