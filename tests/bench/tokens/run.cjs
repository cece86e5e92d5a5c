#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// o200k_base counting benchmark: libprobemcp side by side with the npm
// tokenizers (tiktoken = WASM build of the reference, js-tiktoken,
// gpt-tokenizer), in one run. Built by meson, never run as a test.
//
//   node tests/bench/tokens/run.cjs BUILD_DIR [CORPUS]
//   e.g. node tests/bench/tokens/run.cjs build /work/shared/tokenizer/corpus.txt
//
// CORPUS defaults to tests/data/tokenizer/corpus.txt if present, else the
// corpus is regenerated (deterministically, gen_corpus.cjs) into a cache
// folder and checked against its sha256. Inputs: the corpus, 1 MiB of
// base64 alphabet without whitespace, 1 MiB of 'a'. Every (library, input)
// runs in a fresh process pinned to CPU 0 when taskset exists; the median of
// the runs is reported. The npm packages come from tests/tokenizer/
// (npm ci there). PMCP_BENCH_TIMEOUT (s, default 60) bounds each npm run on
// the pathological inputs (tiktoken panics on 1 MiB of one character, the
// JS ports are quadratic there); PMCP_BENCH_RUNS (default 5) sets the runs.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { spawnSync, execFileSync } = require('node:child_process');
const { createRequire } = require('node:module');

const CORPUS_SHA256 = 'cc1b3e4fcd194dad51f78d24063cb9ede91376ed8d7bf30fbfa4fcffcf8f4647';
const CORPUS_TOKENS = 2559550; // tiktoken 1.0.22 encode_ordinary(corpus).length
const root = path.join(__dirname, '..', '..', '..');
const npmRequire = createRequire(path.join(root, 'tests', 'tokenizer', 'package.json'));

function makeCounter(lib) {
  if (lib === 'tiktoken') {
    const enc = npmRequire('tiktoken').get_encoding('o200k_base');
    return (t) => enc.encode_ordinary(t).length;
  }
  if (lib === 'js-tiktoken') {
    const enc = npmRequire('js-tiktoken').getEncoding('o200k_base');
    return (t) => enc.encode(t, [], []).length;
  }
  if (lib === 'gpt-tokenizer') {
    const g = npmRequire('gpt-tokenizer/encoding/o200k_base');
    const opts = { allowedSpecial: new Set(), disallowedSpecial: new Set() };
    return (t) => g.countTokens(t, opts);
  }
  throw new Error('unknown library ' + lib);
}

// ---- worker: one npm library on one input, in its own process ----
if (process.argv[2] === '--worker') {
  const [, , , lib, file, runs] = process.argv;
  const count = makeCounter(lib);
  const first = count('Hello, world! Time to first count.');
  const firstS = process.uptime(); // from process start to the first count
  const text = fs.readFileSync(file, 'utf8');
  count('Warm-up: The quick brown fox jumps over the lazy dog. {"a": [1.5, 2]}');
  const times = [];
  let tokens = -1;
  for (let i = 0; i < +runs; i++) {
    // CPU time of the process (user + system), as bench-tokens reports:
    // on a shared machine the wall clock mostly measures waiting for a core
    const c0 = process.cpuUsage();
    tokens = count(text);
    const c = process.cpuUsage(c0);
    times.push((c.user + c.system) / 1e6);
  }
  console.log(JSON.stringify({ tokens, times, first_count_s: firstS, first, rss_kb: Math.round(process.memoryUsage().rss / 1024) }));
  process.exit(0);
}

// ---- orchestrator ----
const buildDir = process.argv[2];
if (!buildDir) {
  console.error('usage: node run.cjs BUILD_DIR [CORPUS]');
  process.exit(2);
}
const bench = path.resolve(buildDir, 'tests', 'bench', 'tokens', 'bench-tokens');
if (!fs.existsSync(bench)) {
  console.error(`no ${bench}: build first (meson compile -C ${buildDir})`);
  process.exit(2);
}
const cache = path.join(os.tmpdir(), 'pmcp-bench-tokens');
fs.mkdirSync(cache, { recursive: true });
const sha256 = (f) => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');

let corpus = process.argv[3] || path.join(root, 'tests', 'data', 'tokenizer', 'corpus.txt');
if (!process.argv[3] && !fs.existsSync(corpus)) {
  corpus = path.join(cache, 'corpus.txt');
  if (!fs.existsSync(corpus) || sha256(corpus) !== CORPUS_SHA256) {
    console.error('generating the corpus (gen_corpus.cjs) ...');
    execFileSync(process.execPath, [path.join(__dirname, 'gen_corpus.cjs'), '8000000', '20240601', corpus], { stdio: 'inherit' });
  }
}
const standardCorpus = sha256(corpus) === CORPUS_SHA256;
const { makeRng } = require('./prng.cjs');
const inputs = [['corpus', corpus]];
// one input per script, generated deterministically (gen_scripts.cjs)
const SCRIPT_BYTES = +(process.env.PMCP_BENCH_SCRIPT_BYTES || 2000000);
for (const kind of ['prose', 'code', 'cjk', 'emoji']) {
  const f = path.join(cache, `${kind}_${SCRIPT_BYTES}.txt`);
  if (!fs.existsSync(f)) execFileSync(process.execPath, [path.join(__dirname, 'gen_scripts.cjs'), kind, String(SCRIPT_BYTES), f], { stdio: 'inherit' });
  inputs.push([{ prose: 'English prose', code: 'code (C, Python)', cjk: 'CJK (Chinese, Japanese)', emoji: 'emoji-heavy chat' }[kind], f]);
}
const b64 = path.join(cache, 'b64_1m.txt');
if (!fs.existsSync(b64)) fs.writeFileSync(b64, makeRng(12345).b64(1 << 20));
inputs.push(['1 MiB no whitespace (base64)', b64]);
const a1m = path.join(cache, 'a_1m.txt');
if (!fs.existsSync(a1m)) fs.writeFileSync(a1m, 'a'.repeat(1 << 20));
inputs.push(["1 MiB of 'a'", a1m]);

let pin = [];
try { execFileSync('taskset', ['-c', '0', 'true']); pin = ['taskset', '-c', '0']; } catch { /* unpinned */ }
const RUNS = +(process.env.PMCP_BENCH_RUNS || 5);
const ROUNDS = +(process.env.PMCP_BENCH_ROUNDS || 1);
const TIMEOUT = +(process.env.PMCP_BENCH_TIMEOUT || 60);
const ONLY = process.env.PMCP_BENCH_ONLY ? process.env.PMCP_BENCH_ONLY.split(',') : null; // e.g. libprobemcp,floor
const median = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)];

function run(cmd, args, timeoutS) {
  const full = pin.length ? [...pin.slice(1), cmd, ...args] : args;
  const exe = pin.length ? pin[0] : cmd;
  const t0 = process.hrtime.bigint();
  const r = spawnSync(exe, full, { encoding: 'utf8', timeout: timeoutS * 1000, maxBuffer: 1 << 26 });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0 || !r.stdout.trim()) {
    const timedOut = r.signal === 'SIGTERM' || (r.error && r.error.code === 'ETIMEDOUT');
    const why = timedOut ? `killed after ${timeoutS} s` : ((r.stderr || '').split('\n').find((l) => /Error|panic|unreachable/.test(l)) || `exit ${r.status}`).trim();
    return { error: why, wall };
  }
  return { ...JSON.parse(r.stdout.trim().split('\n').pop()), wall };
}

// Paired rounds: each round runs every library (and the floor) on every
// input once, one after the other, so a change of load hits all of them;
// the figure is the median over the rounds of each round's median.
const libs = ['libprobemcp', 'tiktoken', 'js-tiktoken', 'gpt-tokenizer', 'floor'].filter((l) => !ONLY || ONLY.includes(l));
const acc = new Map(); // input|lib -> { meds: [], tokens, error, rss_kb }
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, file] of inputs) {
    const patho = name.startsWith('1 MiB');
    for (const lib of libs) {
      process.stderr.write(`round ${round + 1}/${ROUNDS}: ${lib} on ${name} ...\n`);
      const native = lib === 'libprobemcp' || lib === 'floor';
      const runs = native ? RUNS : (patho ? 1 : Math.min(RUNS, 3));
      const key = name + '|' + lib;
      if (!acc.has(key)) acc.set(key, { input: name, lib, bytes: fs.statSync(file).size, meds: [] });
      const a = acc.get(key);
      if (a.error && !native) continue; // a failed npm run (timeout, panic) is not retried
      const r = native
        ? run(bench, [lib === 'floor' ? 'floor' : 'count', file, String(runs)], 600)
        : run(process.execPath, ['--max-old-space-size=8192', __filename, '--worker', lib, file, String(runs)], patho ? TIMEOUT : 900);
      if (r.error) { a.error = r.error; continue; }
      a.meds.push(median(r.times));
      a.tokens = r.tokens;
      a.rss_kb = r.hwm_kb || r.rss_kb;
    }
  }
}
const results = [...acc.values()].map((a) => {
  const med = a.meds.length ? median(a.meds) : null;
  return { ...a, median_s: med, MBps: med ? a.bytes / 1e6 / med : null, error: a.meds.length ? null : a.error };
});
// extra libprobemcp modes on the corpus: the incremental counter (4 KiB
// chunks) and many 200-byte strings (the budget engine's pattern)
const extra = [];
for (const mode of ['counter', 'small']) {
  const r = run(bench, [mode, corpus, String(RUNS)], 600);
  const med = r.times ? median(r.times) : null;
  extra.push({ mode, tokens: r.tokens, median_s: med, MBps: med ? fs.statSync(corpus).size / 1e6 / med : null, error: r.error });
}
// time to first count: in-process (from main) and whole process (fork+exec+load)
const firsts = [];
const walls = [];
for (let i = 0; i < 21; i++) {
  const r = run(bench, ['first'], 30);
  firsts.push(r.first_count_s);
  walls.push(r.wall);
}
const firstC = run(bench, ['first'], 30);
const npmFirst = {};
for (const lib of libs.filter((l) => l !== 'libprobemcp' && l !== 'floor')) npmFirst[lib] = run(process.execPath, [__filename, '--worker', lib, b64, '0'], 60).first_count_s;

// ---- report ----
const fmt = (x, d) => (x == null ? '' : x.toFixed(d));
console.log(`\no200k_base token counting, ${new Date().toISOString()}, node ${process.version}, ${os.cpus()[0].model}, ${pin.length ? 'pinned to CPU 0' : 'unpinned'}`);
console.log(`corpus: ${corpus} (${standardCorpus ? 'the standard corpus, sha256 ok' : 'NOT the standard corpus'})\n`);
console.log(`times are CPU time of the process (node: user + system of all its threads); rounds: ${ROUNDS} (median of the rounds' medians), ${RUNS} runs per round for libprobemcp; load average at the end ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}\n`);
console.log('| input | library | tokens | median s | MB/s | x tiktoken | share of floor | peak RSS MB |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|');
for (const r of results) {
  const tk = results.find((x) => x.input === r.input && x.lib === 'tiktoken');
  const ratio = r.MBps && tk && tk.MBps ? (r.MBps / tk.MBps).toFixed(2) : (r.MBps && tk && tk.error ? 'tiktoken failed' : '');
  const fl = results.find((x) => x.input === r.input && x.lib === 'floor');
  const share = r.lib !== 'floor' && r.MBps && fl && fl.MBps ? (r.MBps / fl.MBps).toFixed(3) : '';
  const lib = r.lib === 'floor' ? 'floor: memchr + UTF-8 validation' : r.lib;
  console.log(`| ${r.input} | ${lib} | ${r.error ? 'FAILED: ' + r.error : (r.lib === 'floor' ? '' : r.tokens)} | ${fmt(r.median_s, 4)} | ${fmt(r.MBps, 2)} | ${ratio} | ${share} | ${r.rss_kb ? (r.rss_kb / 1024).toFixed(1) : ''} |`);
}
for (const e of extra) console.log(`| corpus | libprobemcp ${e.mode === 'counter' ? 'pmcp_tokens_counter, 4 KiB chunks' : '200-byte strings'} | ${e.error || e.tokens} | ${fmt(e.median_s, 3)} | ${fmt(e.MBps, 2)} | | |`);
console.log(`\ntime to first count: libprobemcp ${(median(firsts) * 1e3).toFixed(3)} ms from main(), ${(median(walls) * 1e3).toFixed(1)} ms for the whole process (fork, exec, load, count, exit; median of 21)`);
console.log(`  RSS of that process: ${firstC.rss_kb_before} KB before the first count, ${firstC.rss_kb} KB after`);
console.log(`  npm (process start to first count, including node start): ${Object.entries(npmFirst).map(([k, v]) => `${k} ${v ? (v * 1e3).toFixed(0) + ' ms' : '?'}`).join(', ')}`);
const ours = results.find((r) => r.input === 'corpus' && r.lib === 'libprobemcp');
const tk = results.find((r) => r.input === 'corpus' && r.lib === 'tiktoken');
if (ours && standardCorpus && ours.tokens !== CORPUS_TOKENS) console.log(`\nWRONG COUNT: ${ours.tokens}, the reference is ${CORPUS_TOKENS}`);
if (ours && tk && ours.MBps && tk.MBps) console.log(`\ncorpus throughput: ${(ours.MBps / tk.MBps).toFixed(2)}x tiktoken (target >= 3x)`);
for (const [name] of inputs) {
  const mine = results.find((r) => r.input === name && r.lib === 'libprobemcp');
  const bad = results.filter((r) => r.input === name && r.lib !== 'floor' && !r.error && mine && r.tokens !== mine.tokens);
  if (bad.length) console.log(`COUNT DISAGREEMENT on ${name}: libprobemcp ${mine.tokens}, ` + bad.map((r) => `${r.lib} ${r.tokens}`).join(', '));
}

// ---- ns/byte of one long piece (or run) against its length ----
if (!ONLY || ONLY.includes('curve')) {
  const sizes = (process.env.PMCP_BENCH_CURVE || '10000,40000,160000,640000,2560000,16000000').split(',');
  console.log(`\nns/byte against length, libprobemcp (min of repeated counts over >= 0.3 s; median over ${ROUNDS} round(s)):\n`);
  console.log(`| run | ${sizes.map((n) => (+n).toExponential(1)).join(' | ')} | max/min |`);
  console.log(`|---|${sizes.map(() => '---:').join('|')}|---:|`);
  for (const kind of ['a', 'cjk', 'digits', 'spaces']) {
    const per = sizes.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      const r = run(bench, ['curve', kind, ...sizes], 900);
      if (r.error) { console.log(`| ${kind} | FAILED: ${r.error} |`); break; }
      r.points.forEach((p, k) => per[k].push(p.ns_per_byte_min));
    }
    if (!per[0].length) continue;
    const m = per.map(median);
    const label = { a: "'a' x N (one piece)", cjk: 'CJK x N (one word)', digits: 'digits x N', spaces: 'spaces x N (one piece)' }[kind];
    console.log(`| ${label} | ${m.map((x) => x.toFixed(1)).join(' | ')} | ${(Math.max(...m) / Math.min(...m)).toFixed(2)} |`);
  }
}
