// SPDX-License-Identifier: MIT
// stdio benchmark: simple tool calls over one connection, sequential and
// pipelined, against probe-mcp-everything (the same stdio loop as
// probe-mcp-stdio, libprobemcp/src/transport/stdio.c) and against a
// TypeScript SDK server with the same `echo` tool (sdk-server.mjs), side by
// side in the same run: each round measures every server in turn, and the
// ratios are the medians over the rounds.
//
//   node bench.mjs PATH/TO/probe-mcp-everything [--inproc PATH/TO/bench-stdio-inproc]
//                  [--floor PATH/TO/bench-stdio-floor] [--client PATH/TO/bench-stdio-client]
//                  [--rounds R] [--calls N] [--json]
//   (or: ninja -C build bench-stdio)
//
// With --floor, a trivial C program answering with canned replies (no JSON
// parsing, floor.c) is measured too: its CPU per call is what the pipes,
// the syscalls and the wake-ups cost any stdio server on this machine, so
// SDK / floor is the best ratio any server could reach in the same run.
//
// Each server's own CPU time is read from /proc/PID/task/*/schedstat (time
// on CPU of all its threads, in ns), so the client's speed does not cap the
// figure. Also measured: calls/s, the time from spawn to the initialize
// response (wall clock, and the server's own CPU time until then, which a
// loaded machine does not inflate), and the resident set size when idle.
// With --inproc, the engine alone (pmcp_server_handle() in process, no
// pipes) is measured too, which separates the engine from the transport.
// probe-mcp is measured in both protocol eras over the same binary: the
// 2025-11-25 era (initialize, then plain requests) and the 2026-07-28 era
// (no initialize; server/discover first, every request carrying its _meta
// protocolVersion and clientCapabilities), and the modern era's server CPU
// per call is compared with the legacy era's (target: within 10%).
// With --client (bench-stdio-client, client.c), every server is measured a
// second time by a C client: the Node client is slow enough that a server
// sleeps between two of its calls and pays a wake-up for each, which
// doubles the sequential figure of a fast server. Both are printed; the
// transport targets are read on the C client's figures.
// The SDK server is measured in both of its lines, v1
// (@modelcontextprotocol/sdk 1.x) and v2 (@modelcontextprotocol/server 2.x),
// each with zod 4, their current recommended configuration.
// With --callgrind (needs --inproc and --client) nothing is timed: the
// engine in process (instructions inside pmcp_server_handle) and the stdio
// loop (the whole server process, driven by the C client; the difference
// of two runs of different lengths, so start-up cancels out) are counted
// with callgrind in both eras, which the machine's load does not change,
// and their modern / legacy ratios printed side by side.
// This is a benchmark that prints figures, never a timed test.
import { execFileSync, spawn } from 'node:child_process';
import * as cg from '../callgrind.mjs';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const opt = (name, def) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : def;
};
const C_BIN = argv[0] && !argv[0].startsWith('--') ? argv[0] : null;
if (!C_BIN) {
  console.error('usage: node bench.mjs PATH/TO/probe-mcp-everything [--inproc PATH] [--calls N] [--json]');
  process.exit(2);
}
const INPROC = opt('--inproc', null);
const FLOOR = opt('--floor', null);
const CLIENT = opt('--client', null);
const ROUNDS = Math.max(1, Number(opt('--rounds', '3')));
const CALLS = Number(opt('--calls', '20000'));
const SEQ_CALLS = Math.max(1000, Math.floor(CALLS / 4));
const WARMUP = 2000;
const STARTS = 15;

if (argv.includes('--callgrind')) {
  if (!INPROC || !CLIENT || !cg.available()) {
    console.error('bench.mjs --callgrind: needs --inproc, --client and valgrind');
    process.exit(2);
  }
  const files = cg.profiles();
  const n = Number(opt('--calls', '20000'));
  // The engine alone: instructions inside pmcp_server_handle() per call.
  const engine = (modern) => {
    const out = files.next();
    const [vg, ...a] = cg.valgrind(out, ['--toggle-collect=pmcp_server_handle']);
    execFileSync(vg, [...a, INPROC, String(n), ...(modern ? ['--modern'] : [])], { stdio: 'ignore' });
    return cg.instructions(out) / n;
  };
  // The stdio loop: the server process over k x (n/10 sequential + n
  // pipelined) calls; two lengths, the difference per call.
  const loop = (modern) => {
    const run = (k) => {
      const out = files.next();
      execFileSync(CLIENT, [...(modern ? ['--modern'] : []), '--warmup', '0',
        '--seq', String(k * Math.floor(n / 10)), '--pipe', String(k * n), '--',
        ...cg.valgrind(out), C_BIN, '--stdio'], { stdio: 'ignore' });
      return cg.instructions(out);
    };
    return (run(2) - run(1)) / (Math.floor(n / 10) + n);
  };
  console.log(`instructions per echo call (callgrind; ${n} calls in process; `
    + `${Math.floor(n / 10)} sequential + ${n} pipelined over stdio):`);
  console.log('                         legacy      modern   modern / legacy');
  let worst = 0;
  for (const [name, f] of [['engine in process', engine], ['stdio loop (C client)', loop]]) {
    const l = f(false), m = f(true);
    worst = Math.max(worst, m / l);
    console.log(`${name.padEnd(22)} ${(l / 1000).toFixed(2).padStart(8)}k ${(m / 1000).toFixed(2).padStart(10)}k   ${cg.verdict(m / l)}`);
  }
  files.done();
  console.log(`${worst <= 1.10 ? 'met ' : 'MISS'}  modern / legacy instructions per call <= 1.10, engine and stdio loop (worst ${worst.toFixed(3)})`);
  process.exit(0);
}

const SERVERS = [
  { name: 'probe-mcp', cmd: C_BIN, args: ['--stdio'] },
  { name: 'ts-sdk', cmd: process.execPath, args: [join(here, 'sdk-server.mjs')] },
  { name: 'floor', cmd: FLOOR, args: [], skip: !FLOOR },
  { name: 'probe-modern', cmd: C_BIN, args: ['--stdio'], modern: true },
  { name: 'ts-sdk-v2', cmd: process.execPath, args: [join(here, 'sdk2-server.mjs')] },
];
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

// ---- A minimal JSON-RPC client over the child's pipes ---------------------

class Conn {
  constructor(cmd, args, modern = false) {
    this.modern = modern;
    this.t0 = process.hrtime.bigint();
    this.proc = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    this.proc.stdin.setMaxListeners(0);
    this.pending = new Map();
    this.nextId = 1;
    this.buf = '';
    this.proc.stdout.setEncoding('utf8');
    this.proc.stdout.on('data', (d) => this.onData(d));
    this.exited = new Promise((r) => this.proc.once('exit', r));
  }

  onData(d) {
    this.buf += d;
    let nl;
    while ((nl = this.buf.indexOf('\n')) >= 0) {
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      if (!line.trim()) continue;
      const msg = JSON.parse(line);
      const p = this.pending.get(msg.id);
      if (p) {
        this.pending.delete(msg.id);
        if (msg.error) p.reject(new Error(JSON.stringify(msg.error)));
        else p.resolve(msg.result);
      }
    }
  }

  requestText(method, params) {
    const id = this.nextId++;
    if (this.modern) params = { ...params, _meta: MODERN_META };
    const text = JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n';
    const done = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
    return { text, done };
  }

  request(method, params) {
    const { text, done } = this.requestText(method, params);
    this.proc.stdin.write(text);
    return done;
  }

  notify(method, params) {
    this.proc.stdin.write(JSON.stringify({ jsonrpc: '2.0', method, params }) + '\n');
  }

  async initialize() {
    if (this.modern) {
      // No handshake in the 2026-07-28 era: the first answer is discover's.
      const r = await this.request('server/discover', {});
      if (!r.supportedVersions?.includes('2026-07-28')) throw new Error(`discover: ${JSON.stringify(r)}`);
      this.initNs = Number(process.hrtime.bigint() - this.t0);
      this.initCpuNs = cpuNs(this.proc.pid);
      return r;
    }
    const r = await this.request('initialize', {
      protocolVersion: '2025-06-18', capabilities: {},
      clientInfo: { name: 'bench', version: '1' },
    });
    this.initNs = Number(process.hrtime.bigint() - this.t0);
    this.initCpuNs = cpuNs(this.proc.pid);
    this.notify('notifications/initialized', {});
    return r;
  }

  async close() {
    this.proc.stdin.end();
    const t = setTimeout(() => this.proc.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(t);
  }
}

// ---- /proc readings -----------------------------------------------------

function cpuNs(pid) {
  let total = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch { /* the thread ended between the listing and the read */ }
  }
  return total;
}

function rssKiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// ---- The runs -------------------------------------------------------------

const echo = (i) => ({ name: 'echo', arguments: { text: `hello ${i}` } });

async function sequential(c, n) {
  const cpu0 = cpuNs(c.proc.pid);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const r = await c.request('tools/call', echo(i));
    if (r.content[0].text !== `hello ${i}`) throw new Error(`wrong answer ${JSON.stringify(r)}`);
  }
  const wall = Number(process.hrtime.bigint() - t0);
  return { cpuPerCall: (cpuNs(c.proc.pid) - cpu0) / n, callsPerSec: n / (wall / 1e9) };
}

async function pipelined(c, n) {
  const cpu0 = cpuNs(c.proc.pid);
  const t0 = process.hrtime.bigint();
  const all = [];
  let chunk = '';
  for (let i = 0; i < n; i++) {
    const { text, done } = c.requestText('tools/call', echo(i));
    chunk += text;
    all.push(done.then((r) => {
      if (r.content[0].text !== `hello ${i}`) throw new Error(`wrong answer ${JSON.stringify(r)}`);
    }));
    if (chunk.length > 64 * 1024) {
      c.proc.stdin.write(chunk);
      chunk = '';
    }
  }
  c.proc.stdin.write(chunk);
  await Promise.all(all);
  const wall = Number(process.hrtime.bigint() - t0);
  return { cpuPerCall: (cpuNs(c.proc.pid) - cpu0) / n, callsPerSec: n / (wall / 1e9) };
}

async function measure(s) {
  // Start-to-initialize-response, over fresh processes.
  const starts = [];
  const startCpus = [];
  for (let i = 0; i < STARTS; i++) {
    const c = new Conn(s.cmd, s.args, s.modern);
    await c.initialize();
    starts.push(c.initNs);
    startCpus.push(c.initCpuNs);
    await c.close();
  }
  const c = new Conn(s.cmd, s.args, s.modern);
  await c.initialize();
  await pipelined(c, WARMUP);
  await sequential(c, WARMUP / 4);
  await sleep(300);
  const idleRss = rssKiB(c.proc.pid);
  const seq = await sequential(c, SEQ_CALLS);
  const pipe = await pipelined(c, CALLS);
  const busyRss = rssKiB(c.proc.pid);
  await c.close();
  let cc = null;
  if (CLIENT) {
    const node = s.cmd === process.execPath;
    const out = execFileSync(CLIENT, [...(s.modern ? ['--modern'] : []),
      '--seq', String(node ? SEQ_CALLS : SEQ_CALLS * 2), '--pipe', String(CALLS), '--warmup', String(WARMUP),
      '--', s.cmd, ...s.args], { encoding: 'utf8' });
    const j = JSON.parse(out);
    cc = { seq: { cpuPerCall: j.seqCpuPerCallNs, callsPerSec: j.seqCallsPerSec },
      pipe: { cpuPerCall: j.pipeCpuPerCallNs, callsPerSec: j.pipeCallsPerSec } };
  }
  return { name: s.name, cc, startMs: median(starts) / 1e6, startMinMs: Math.min(...starts) / 1e6,
    startCpuMs: median(startCpus) / 1e6,
    idleRssKiB: idleRss, busyRssKiB: busyRss, seq, pipe };
}

const us = (ns) => (ns / 1000).toFixed(2);
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
console.log(`stdio bench: echo tool, one connection; ${SEQ_CALLS} sequential + ${CALLS} pipelined calls `
  + `after ${WARMUP} warm-up calls; ${ROUNDS} round(s), each server in turn`);
const rounds = [];
for (let k = 0; k < ROUNDS; k++) {
  const results = [];
  for (const s of SERVERS) results.push(s.skip ? null : await measure(s));
  const [c, ts, fl, mo, t2] = results;
  const r = (a, b) => a / b;
  const x = { results,
    ratioSeq: r(ts.seq.cpuPerCall, c.seq.cpuPerCall), ratioPipe: r(ts.pipe.cpuPerCall, c.pipe.cpuPerCall),
    ratio2Seq: r(t2.seq.cpuPerCall, c.seq.cpuPerCall), ratio2Pipe: r(t2.pipe.cpuPerCall, c.pipe.cpuPerCall),
    floorSeq: fl ? r(ts.seq.cpuPerCall, fl.seq.cpuPerCall) : NaN,
    floorPipe: fl ? r(ts.pipe.cpuPerCall, fl.pipe.cpuPerCall) : NaN,
    eraSeq: r(mo.seq.cpuPerCall, c.seq.cpuPerCall), eraPipe: r(mo.pipe.cpuPerCall, c.pipe.cpuPerCall) };
  if (CLIENT) {
    x.cRatioSeq = r(ts.cc.seq.cpuPerCall, c.cc.seq.cpuPerCall);
    x.cRatioPipe = r(ts.cc.pipe.cpuPerCall, c.cc.pipe.cpuPerCall);
    x.cRatio2Seq = r(t2.cc.seq.cpuPerCall, c.cc.seq.cpuPerCall);
    x.cRatio2Pipe = r(t2.cc.pipe.cpuPerCall, c.cc.pipe.cpuPerCall);
    x.cFloorSeq = fl ? r(ts.cc.seq.cpuPerCall, fl.cc.seq.cpuPerCall) : NaN;
    x.cFloorPipe = fl ? r(ts.cc.pipe.cpuPerCall, fl.cc.pipe.cpuPerCall) : NaN;
    x.cFloor2Seq = fl ? r(t2.cc.seq.cpuPerCall, fl.cc.seq.cpuPerCall) : NaN;
    x.cFloor2Pipe = fl ? r(t2.cc.pipe.cpuPerCall, fl.cc.pipe.cpuPerCall) : NaN;
    x.cEraSeq = r(mo.cc.seq.cpuPerCall, c.cc.seq.cpuPerCall);
    x.cEraPipe = r(mo.cc.pipe.cpuPerCall, c.cc.pipe.cpuPerCall);
  }
  rounds.push(x);
  console.log('');
  console.log(`round ${k + 1} (load average ${load()})`);
  console.log('server        CPU/call seq  CPU/call pipe  calls/s seq  calls/s pipe  start->init (CPU)    idle RSS'
    + (CLIENT ? '   C client: CPU/call seq, pipe' : ''));
  for (const q of results) {
    if (!q) continue;
    console.log(`${q.name.padEnd(12)}  ${us(q.seq.cpuPerCall).padStart(9)} us  ${us(q.pipe.cpuPerCall).padStart(10)} us  `
      + `${q.seq.callsPerSec.toFixed(0).padStart(11)}  ${q.pipe.callsPerSec.toFixed(0).padStart(12)}  `
      + `${q.startMs.toFixed(2).padStart(8)} ms (${q.startCpuMs.toFixed(2)} ms)  ${(q.idleRssKiB / 1024).toFixed(1).padStart(5)} MiB`
      + (q.cc ? `   ${us(q.cc.seq.cpuPerCall).padStart(9)} us, ${us(q.cc.pipe.cpuPerCall).padStart(8)} us` : ''));
  }
  console.log(`Node client: SDK v1 / probe-mcp: sequential ${x.ratioSeq.toFixed(1)}x, pipelined ${x.ratioPipe.toFixed(1)}x; `
    + `SDK v2 / probe-mcp: sequential ${x.ratio2Seq.toFixed(1)}x, pipelined ${x.ratio2Pipe.toFixed(1)}x`
    + (fl ? `; SDK v1 / floor: sequential ${x.floorSeq.toFixed(1)}x, pipelined ${x.floorPipe.toFixed(1)}x` : ''));
  if (CLIENT) {
    console.log(`C client:    SDK v1 / probe-mcp: sequential ${x.cRatioSeq.toFixed(1)}x, pipelined ${x.cRatioPipe.toFixed(1)}x; `
      + `SDK v2 / probe-mcp: sequential ${x.cRatio2Seq.toFixed(1)}x, pipelined ${x.cRatio2Pipe.toFixed(1)}x`
      + (fl ? `; SDK v1 / floor: sequential ${x.cFloorSeq.toFixed(1)}x, pipelined ${x.cFloorPipe.toFixed(1)}x` : ''));
  }
  console.log(`server CPU per call, modern era / legacy era: Node client sequential ${x.eraSeq.toFixed(3)}, pipelined ${x.eraPipe.toFixed(3)}`
    + (CLIENT ? `; C client sequential ${x.cEraSeq.toFixed(3)}, pipelined ${x.cEraPipe.toFixed(3)}` : ''));
}
const inprocRun = (modern) => JSON.parse(execFileSync(INPROC, [String(CALLS * 10), ...(modern ? ['--modern'] : [])],
  { encoding: 'utf8' }));
const inproc = INPROC ? inprocRun(false) : null;
const inprocModern = INPROC ? inprocRun(true) : null;

const med = (f) => median(rounds.map(f));
const c = { seq: { cpuPerCall: med((r) => r.results[0].seq.cpuPerCall), callsPerSec: med((r) => r.results[0].seq.callsPerSec) },
  pipe: { cpuPerCall: med((r) => r.results[0].pipe.cpuPerCall), callsPerSec: med((r) => r.results[0].pipe.callsPerSec) },
  startMs: med((r) => r.results[0].startMs), startMinMs: Math.min(...rounds.map((r) => r.results[0].startMinMs)),
  startCpuMs: med((r) => r.results[0].startCpuMs), idleRssKiB: med((r) => r.results[0].idleRssKiB) };
const ts = { seq: { cpuPerCall: med((r) => r.results[1].seq.cpuPerCall), callsPerSec: med((r) => r.results[1].seq.callsPerSec) },
  pipe: { cpuPerCall: med((r) => r.results[1].pipe.cpuPerCall), callsPerSec: med((r) => r.results[1].pipe.callsPerSec) },
  startMs: med((r) => r.results[1].startMs), startCpuMs: med((r) => r.results[1].startCpuMs),
  idleRssKiB: med((r) => r.results[1].idleRssKiB) };
const ratioSeq = med((r) => r.ratioSeq);
const ratioPipe = med((r) => r.ratioPipe);
const eraSeq = med((r) => r.eraSeq);
const eraPipe = med((r) => r.eraPipe);
const moSeq = med((r) => r.results[3].seq.cpuPerCall);
const moPipe = med((r) => r.results[3].pipe.cpuPerCall);

console.log('');
console.log(`medians over ${ROUNDS} round(s):`);
if (inproc) {
  console.log(`engine alone (pmcp_server_handle in process, no pipes): ${us(inproc.cpuPerCallNs)} us CPU per call, `
    + `server setup ${(inproc.setupCpuNs / 1e6).toFixed(2)} ms CPU; modern era ${us(inprocModern.cpuPerCallNs)} us, `
    + `modern / legacy ${(inprocModern.cpuPerCallNs / inproc.cpuPerCallNs).toFixed(3)}`);
}
console.log(`server CPU per call: probe-mcp ${us(c.seq.cpuPerCall)} us sequential, ${us(c.pipe.cpuPerCall)} us pipelined; `
  + `SDK ${us(ts.seq.cpuPerCall)} us sequential, ${us(ts.pipe.cpuPerCall)} us pipelined`);
console.log(`server CPU per call, SDK / probe-mcp: sequential ${ratioSeq.toFixed(1)}x, pipelined ${ratioPipe.toFixed(1)}x`);
console.log(`server CPU per call, probe-mcp modern era (2026-07-28): ${us(moSeq)} us sequential, ${us(moPipe)} us pipelined; `
  + `modern / legacy: sequential ${eraSeq.toFixed(3)}, pipelined ${eraPipe.toFixed(3)}`);
if (FLOOR) {
  console.log(`transport floor (floor.c, canned replies): ${us(med((r) => r.results[2].seq.cpuPerCall))} us sequential, `
    + `${us(med((r) => r.results[2].pipe.cpuPerCall))} us pipelined; best ratio any stdio server could reach, SDK / floor: `
    + `sequential ${med((r) => r.floorSeq).toFixed(1)}x, pipelined ${med((r) => r.floorPipe).toFixed(1)}x`);
}
const t2s = med((r) => r.results[4].seq.cpuPerCall), t2p = med((r) => r.results[4].pipe.cpuPerCall);
console.log(`SDK v2 (@modelcontextprotocol/server): ${us(t2s)} us sequential, ${us(t2p)} us pipelined; `
  + `SDK v2 / probe-mcp: sequential ${med((r) => r.ratio2Seq).toFixed(1)}x, pipelined ${med((r) => r.ratio2Pipe).toFixed(1)}x`);
const ccMed = (i, k) => med((r) => r.results[i].cc[k].cpuPerCall);
if (CLIENT) {
  console.log('C client (bench-stdio-client), server CPU per call, sequential / pipelined:');
  for (const [i, name] of [[0, 'probe-mcp'], [3, 'probe-modern'], [1, 'ts-sdk v1'], [4, 'ts-sdk v2'], [2, 'floor']]) {
    if (rounds[0].results[i]) console.log(`  ${name.padEnd(13)} ${us(ccMed(i, 'seq')).padStart(8)} us / ${us(ccMed(i, 'pipe')).padStart(8)} us`);
  }
  console.log(`C client ratios: SDK v1 / probe-mcp sequential ${med((r) => r.cRatioSeq).toFixed(1)}x, pipelined ${med((r) => r.cRatioPipe).toFixed(1)}x; `
    + `SDK v2 / probe-mcp sequential ${med((r) => r.cRatio2Seq).toFixed(1)}x, pipelined ${med((r) => r.cRatio2Pipe).toFixed(1)}x`);
  if (FLOOR) console.log(`C client, best any stdio server could reach (SDK / floor): v1 sequential ${med((r) => r.cFloorSeq).toFixed(1)}x, `
    + `pipelined ${med((r) => r.cFloorPipe).toFixed(1)}x; v2 sequential ${med((r) => r.cFloor2Seq).toFixed(1)}x, pipelined ${med((r) => r.cFloor2Pipe).toFixed(1)}x`);
  console.log(`C client, modern / legacy: sequential ${med((r) => r.cEraSeq).toFixed(3)}, pipelined ${med((r) => r.cEraPipe).toFixed(3)}`);
}
console.log(`calls/s, probe-mcp / SDK: sequential ${(c.seq.callsPerSec / ts.seq.callsPerSec).toFixed(1)}x, `
  + `pipelined ${(c.pipe.callsPerSec / ts.pipe.callsPerSec).toFixed(1)}x`);
if (inproc) {
  console.log(`server CPU per call, SDK over stdio / probe-mcp engine in process: `
    + `sequential ${(ts.seq.cpuPerCall / inproc.cpuPerCallNs).toFixed(1)}x, pipelined ${(ts.pipe.cpuPerCall / inproc.cpuPerCallNs).toFixed(1)}x`);
}
console.log(`start->initialize: probe-mcp ${c.startMs.toFixed(2)} ms (${c.startCpuMs.toFixed(2)} ms CPU) `
  + `vs SDK ${ts.startMs.toFixed(2)} ms (${ts.startCpuMs.toFixed(2)} ms CPU); `
  + `idle RSS: probe-mcp ${(c.idleRssKiB / 1024).toFixed(1)} MiB vs SDK ${(ts.idleRssKiB / 1024).toFixed(1)} MiB`);
console.log('');
const target = (ok, what) => console.log(`${ok ? 'met ' : 'MISS'}  ${what}`);
target(eraSeq <= 1.10 && eraPipe <= 1.10, `modern era within 10% of the legacy era's server CPU per call, Node client `
  + `(sequential ${eraSeq.toFixed(3)}, pipelined ${eraPipe.toFixed(3)})`);
if (CLIENT) {
  const es = med((r) => r.cEraSeq), ep = med((r) => r.cEraPipe);
  target(es <= 1.10 && ep <= 1.10, `modern era within 10% of the legacy era's, C client (sequential ${es.toFixed(3)}, pipelined ${ep.toFixed(3)})`);
  const s1 = med((r) => r.cRatioSeq), p1 = med((r) => r.cRatioPipe);
  const s2 = med((r) => r.cRatio2Seq), p2 = med((r) => r.cRatio2Pipe);
  target(s1 >= 25 && s2 >= 25, `>= 25x less server CPU per call than the SDK server, sequential, C client (v1 ${s1.toFixed(1)}x, v2 ${s2.toFixed(1)}x)`);
  target(p1 >= 40 && p2 >= 40, `>= 40x less server CPU per call than the SDK server, pipelined, C client (v1 ${p1.toFixed(1)}x, v2 ${p2.toFixed(1)}x)`);
}
target(ratioSeq >= 25, `>= 25x less server CPU per call than the SDK v1 server, sequential, Node client (${ratioSeq.toFixed(1)}x)`);
target(ratioPipe >= 40, `>= 40x less server CPU per call than the SDK v1 server, pipelined, Node client (${ratioPipe.toFixed(1)}x)`);
target(c.startMs < 10, `start-to-initialize-response < 10 ms, wall clock: median ${c.startMs.toFixed(2)} ms, `
  + `best ${c.startMinMs.toFixed(2)} ms, ${c.startCpuMs.toFixed(2)} ms of server CPU `
  + `(load average ${load()} on this machine)`);
target(c.idleRssKiB < 8 * 1024, `idle RSS < 8 MB (${(c.idleRssKiB / 1024).toFixed(1)} MiB)`);
if (argv.includes('--json')) console.log(JSON.stringify({ rounds, inproc, inprocModern }));
