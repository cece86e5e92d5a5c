#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Differential test of `probe tokens` against the tiktoken npm package (the
// WASM build of the reference Rust core), o200k_base encode_ordinary.
//
//   node diff.cjs PATH/TO/probe [DATA_DIR]
//
// Generates random texts from a fixed seed -- every Unicode plane, hostile
// classes (marks before capitals, U+0085, U+FEFF, long s, Unicode 16 vs 17
// characters), invalid-looking sequences, long runs of one character,
// whitespace runs, digits, contractions in mixed case, JSON and code -- and
// checks that every line's ids are identical. Also: the public vectors, the
// bare count of a concatenation, and the CLI's refusal of invalid UTF-8.
//
// Environment: PMCP_TOKENIZER_FUZZ_N (texts, default 4000; e.g. 200000 for a
// long run), PMCP_TOKENIZER_FUZZ_SEED (default 0x5EED), PMCP_TOKENIZER_FUZZ_LONG=1
// (runs of up to 200k characters instead of 3k; tiktoken is quadratic there).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const os = require('node:os');
const { spawnSync } = require('node:child_process');
const { get_encoding } = require('tiktoken');

const probe = process.argv[2];
const dataDir = process.argv[3] || path.join(__dirname, '..', 'data', 'tokenizer');
if (!probe) {
  console.error('usage: node diff.cjs PATH/TO/probe [DATA_DIR]');
  process.exit(2);
}
const N = +(process.env.PMCP_TOKENIZER_FUZZ_N || 4000);
const SEED = +(process.env.PMCP_TOKENIZER_FUZZ_SEED || 0x5eed);
const LONG = process.env.PMCP_TOKENIZER_FUZZ_LONG === '1';
const enc = get_encoding('o200k_base');
let failures = 0;
const fail = (msg) => {
  failures++;
  if (failures <= 20) console.error('FAIL ' + msg);
};

// ---- deterministic PRNG (splitmix32-style) ----
let st = SEED >>> 0;
const next = () => {
  st = (st + 0x9e3779b9) >>> 0;
  let z = st;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  return (z ^ (z >>> 16)) >>> 0;
};
const int = (lo, hi) => lo + (next() % (hi - lo + 1));
const pick = (a) => a[next() % a.length];

// ---- generators ----
const cp = (c) => String.fromCodePoint(c);
function anyScalar() {
  // every plane, weighted so the BMP and the SMP get most draws
  const plane = pick([0, 0, 0, 0, 1, 1, 2, 3, 14, 15, 16, int(4, 13)]);
  for (;;) {
    const c = plane * 0x10000 + int(0, 0xffff);
    if (c < 0xd800 || c > 0xdfff) return cp(c);
  }
}
const hostile = ['a', 'b', 'Z', 'Q', 'ǅ', 'ʰ', '中', 'ß', '\u0301', '\u0308', '\u093f', ' ', ' ', '\t', '\n', '\r',
  '\u000b', '\u000c', '\u0085', '\u00a0', '\u3000', '\u2028', '\u2029', '\u1680', '\u180e', '\ufeff', '\u200b', "'", 's', 'S',
  'ſ', 't', 'l', 'L', 'e', 'R', 'v', 'd', 'D', 'M', '1', '²', 'Ⅻ', '٣', '.', '/', '!', '"', '<', '|', '>', '\\', '😀', '\u200d',
  '\u{10D40}', '\u{105C0}', '\u{11DE0}', '\u{323B0}', '\u{E0041}', '\uE000', '_', '-', 'K', '\u212a', 'İ', 'ı', 'ǈ', '\u0345',
  '\u001c', '\u001f', '\u00ad', '\u2060', '\u0000', '\u202f', '\u205f', '\u2007'];
const invalidLooking = ['\ufffd', '\ufffe', '\uffff', '\u{10ffff}', '\u{fffff}', 'Ã©', 'Ã', 'â€™', 'ï»¿', '\u0000', '\u0001',
  '\u007f', '\u0080', '\u009f', '\\x80', '\\uD800', '%C3%28', '\u{1f3fb}', '\u{1f1fa}\u{1f1f8}', '\u{e0001}', '\u{f0000}'];
const words = ['the', 'The', 'THE', 'hello', 'World', 'camelCase', 'HTTPServer', 'snake_case', 'x', 'naïve', 'Straße',
  'İstanbul', 'ﬁle', '東京', 'Москва', 'مرحبا', 'नमस्ते', '한국어', 'ǅemal'];
const contractions = ["'s", "'S", "'t", "'T", "'re", "'RE", "'rE", "'Re", "'ve", "'VE", "'vE", "'m", "'M", "'ll", "'LL",
  "'lL", "'d", "'D", "'ſ", "'", "''", "'x", "'r", "'l", "’s"];
const spaces = [' ', '  ', '\t', '\n', '\r\n', '\n\n', '   ', '\u00a0', '\u3000', ' \n ', '\r', '\u0085', '\u2028'];
const puncts = ['.', ',', '!', '?', '...', '()', '{}', '[]', '"', '<|endoftext|>', '/', '//', '/*', '*/', '=>', '::', '#'];

function runOf(maxLen) {
  const ch = pick(['a', 'A', ' ', '\n', '!', '7', 'é', '中', '😀', '\u0301', "'", 'ab', 'aB', ' a', '\t', '\u3000', 'ſ', 'Ǆ']);
  const n = int(1, maxLen);
  return ch.repeat(Math.max(1, Math.floor(n / ch.length)));
}
function digits() {
  const n = int(1, 40);
  let s = '';
  for (let i = 0; i < n; i++) s += next() % 3 ? String(int(0, 9)) : pick(['٣', '²', '½', 'Ⅻ', '７', '𝟘', '¹', '⁴', '৩']);
  return s;
}
function jsonish() {
  const v = { id: int(0, 1e6), name: pick(words), ok: next() % 2 === 0, vals: [int(0, 100) / 7, -int(0, 9)], t: '2024-05-0' + int(1, 9) + 'T12:00:00Z' };
  return JSON.stringify(v, null, next() % 2 ? 2 : undefined);
}
function piece() {
  switch (next() % 12) {
    case 0: return anyScalar();
    case 1: case 2: return pick(hostile);
    case 3: return pick(invalidLooking);
    case 4: return pick(words) + pick(contractions);
    case 5: return pick(spaces).repeat(int(1, 6));
    case 6: return digits();
    case 7: return pick(words);
    case 8: return pick(puncts);
    case 9: return next() % 8 === 0 ? runOf(LONG ? 200000 : 3000) : runOf(40);
    case 10: return jsonish();
    default: return pick(words).split('').map((c) => (next() % 2 ? c.toUpperCase() : c.toLowerCase())).join('') + pick(contractions);
  }
}
function text() {
  const k = int(1, 24);
  let s = '';
  for (let i = 0; i < k; i++) s += piece();
  return s;
}

// ---- run probe ----
function runProbe(args, input) {
  const r = spawnSync(probe, args, { input, maxBuffer: 1 << 30 });
  if (r.error) throw r.error;
  return r;
}
function encodeAll(texts) {
  const input = texts.map((t) => JSON.stringify({ text: t })).join('\n') + '\n';
  const r = runProbe(['tokens', 'encode', '--jsonl'], input);
  if (r.status !== 0) {
    fail(`probe tokens encode --jsonl exited ${r.status}: ${r.stderr.toString().slice(0, 300)}`);
    return [];
  }
  return r.stdout.toString().split('\n').filter((l) => l.length > 0);
}
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

// 1. the public vectors through the CLI
{
  const lines = fs.readFileSync(path.join(dataDir, 'vectors_public.jsonl'), 'utf8').split('\n').filter(Boolean);
  const r = runProbe(['tokens', 'encode', '--jsonl', path.join(dataDir, 'vectors_public.jsonl')]);
  if (r.status !== 0) fail('vectors: exit ' + r.status + ' ' + r.stderr);
  const out = r.stdout.toString().split('\n').filter(Boolean);
  if (out.length !== lines.length) fail(`vectors: ${out.length} output lines for ${lines.length}`);
  lines.forEach((l, i) => {
    const v = JSON.parse(l);
    if (out[i] !== JSON.stringify(v.tokens)) fail(`vectors line ${i + 1}: ${JSON.stringify(v.text.slice(0, 60))}`);
  });
  console.log(`vectors: ${lines.length} lines checked`);
}

// 2. random texts, in batches
const t0 = Date.now();
let checked = 0;
const all = [];
for (let done = 0; done < N;) {
  const batch = [];
  for (let i = 0; i < 500 && done < N; i++, done++) batch.push(text());
  const out = encodeAll(batch);
  batch.forEach((t, i) => {
    const want = Array.from(enc.encode_ordinary(t));
    const got = out[i] === undefined ? null : JSON.parse(out[i]);
    checked++;
    if (!got || !same(got, want)) fail(`text ${JSON.stringify(t.length > 200 ? t.slice(0, 200) + '...' : t)}: got ${out[i] && out[i].slice(0, 120)}, want ${JSON.stringify(want).slice(0, 120)}`);
  });
  if (all.length < 2000) all.push(...batch.slice(0, 50));
}
console.log(`random: ${checked} texts (seed ${SEED}) in ${Date.now() - t0} ms`);

// 2b. ASCII runs against non-ASCII neighbours (the pre-tokenizer decides
// ASCII pieces from its own table and defers to the Unicode path whenever a
// neighbour is not ASCII): words, digits, punctuation and whitespace runs
// each followed or preceded by a mark, a non-ASCII letter, digit, space or
// symbol, contractions, base64 and long mixed-case runs, cut anywhere.
{
  const asciiRuns = ['word', 'Word', 'WORD', 'wORD', 'x', 'X', ' word', ' Word', '(word', '\tword', '.word', ' ',
    '  ', '\t\t', '\n', '\r\n', ' \n', '\n  ', '12', '123', '1234567', '.', '...', ' ...', '//', ' /', '!\n', '"/\r\n',
    "'s", "word's", "WORD'LL", "'", "x'", 'aBcD', 'HTTPServer', 'a1b2', '_', '__init__', '+/=', '-->'];
  const neighbours = ['\u0301', '\u0308', 'é', 'É', 'ß', '中', 'ǅ', 'ʰ', '٣', '²', '\u00a0', '\u3000', '\u2028', '\u0085',
    '—', '€', '😀', '\u200d', '\ufeff', 'ſ', '\u212a', 'İ', '’'];
  const b64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const texts = [];
  for (let i = 0; i < 3000; i++) {
    let t = '';
    const k = int(1, 10);
    for (let j = 0; j < k; j++) {
      const r = next() % 6;
      if (r === 0) t += pick(neighbours);
      else if (r === 1) { let b = ''; for (let q = int(1, 60); q > 0; q--) b += b64[next() % 64]; t += b; }
      else t += pick(asciiRuns);
    }
    // cut at any UTF-16 unit that is not inside a surrogate pair
    let cut = int(0, t.length);
    if (cut > 0 && cut < t.length && /[\ud800-\udbff]/.test(t[cut - 1])) cut--;
    texts.push(next() % 3 === 0 ? t.slice(0, cut) : t);
  }
  const ok = texts.filter((t) => t.length > 0);
  const out = encodeAll(ok);
  ok.forEach((t, i) => {
    const want = Array.from(enc.encode_ordinary(t));
    const got = out[i] === undefined ? null : JSON.parse(out[i]);
    if (!got || !same(got, want)) fail(`ascii-boundary text ${JSON.stringify(t)}: got ${out[i] && out[i].slice(0, 120)}, want ${JSON.stringify(want).slice(0, 120)}`);
  });
  all.push(...ok.slice(0, 200));
  console.log(`ascii boundaries: ${ok.length} texts`);
}

// 3. bare count of a concatenation, through a file and through stdin
{
  const big = all.join('');
  const want = enc.encode_ordinary(big).length;
  const tmp = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pmcp-tok-')), 'big.txt');
  fs.writeFileSync(tmp, big);
  const r1 = runProbe(['tokens', 'count', tmp]);
  const r2 = runProbe(['tokens', 'count'], Buffer.from(big, 'utf8'));
  for (const [name, r] of [['file', r1], ['stdin', r2]]) {
    if (r.status !== 0 || r.stdout.toString() !== want + '\n') fail(`count via ${name}: got ${JSON.stringify(r.stdout.toString())} status ${r.status}, want ${want}`);
  }
  console.log(`count: ${Buffer.byteLength(big)} bytes, ${want} tokens`);
  fs.rmSync(path.dirname(tmp), { recursive: true });
}

// 4. invalid UTF-8 is refused with the offset; lone surrogates in JSON too
{
  const cases = [[Buffer.from([0x61, 0x62, 0x80]), 2], [Buffer.from([0x61, 0xed, 0xa0, 0x80]), 1],
    [Buffer.from([0xc0, 0xaf]), 0], [Buffer.from([0x61, 0x62, 0x63, 0xe2, 0x82]), 3], [Buffer.from([0xf4, 0x90, 0x80, 0x80]), 0]];
  for (const [buf, off] of cases) {
    const r = runProbe(['tokens', 'count'], buf);
    const err = r.stderr.toString();
    if (r.status !== 1 || !err.includes(`invalid UTF-8 at byte ${off}`) || r.stdout.length) fail(`invalid ${buf.toString('hex')}: status ${r.status}, stderr ${err}`);
  }
  const r = runProbe(['tokens', 'encode', '--jsonl'], '{"text":"ok"}\n{"text":"\\udc00"}\n');
  if (r.status !== 1 || !/line 2: .*surrogate/.test(r.stderr.toString())) fail('lone surrogate escape not refused: ' + r.stderr);
  const r2 = runProbe(['tokens', 'encode', '--jsonl'], '{"txt":"a"}\n');
  if (r2.status !== 1 || !r2.stderr.toString().includes('line 1')) fail('missing "text" not refused');
  console.log('invalid input: refused with offsets');
}

enc.free();
if (failures) {
  console.error(`${failures} failure(s)`);
  process.exit(1);
}
console.log('ok');
