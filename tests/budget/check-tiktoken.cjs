#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// The budget property test, counted by the reference: runs budget-prop
// (10,000 randomly shaped results at random budgets), then counts every
// answer with the tiktoken npm package (the WASM build of tiktoken,
// o200k_base, encode_ordinary) and checks it is within its token budget
// and its UTF-8 size within 8 bytes per budget token.
//
//   node check-tiktoken.cjs PATH/TO/budget-prop [COUNT]
//
// tiktoken comes from tests/tokenizer (its package-lock.json; .ci/test
// runs npm ci there).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { createRequire } = require('node:module');

const prop = process.argv[2];
// default: budget-prop's own (10,000 results; 2,000 in a sanitizer build)
const count = process.argv[3] || process.env.PMCP_BUDGET_PROP_N || '';
if (!prop) {
  console.error('usage: node check-tiktoken.cjs PATH/TO/budget-prop [COUNT]');
  process.exit(2);
}
const req = createRequire(path.join(__dirname, '..', 'tokenizer', 'package.json'));
const { get_encoding } = req('tiktoken');
const enc = get_encoding('o200k_base');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmcp-budget-'));
const out = path.join(dir, 'answers.jsonl');
const args = count ? ['--count', String(count), '--out', out] : ['--out', out];
const r = spawnSync(prop, args, { encoding: 'utf8' });
process.stdout.write(r.stdout || '');
process.stderr.write(r.stderr || '');
if (r.status !== 0) {
  console.error(`budget-prop failed with status ${r.status}`);
  process.exit(1);
}
const lines = fs.readFileSync(out, 'utf8').split('\n').filter((l) => l.length);
let failures = 0, worst = 0, n = 0;
for (const line of lines) {
  const { budget, text } = JSON.parse(line);
  const tokens = enc.encode_ordinary(text).length;
  const bytes = Buffer.byteLength(text, 'utf8');
  n++;
  worst = Math.max(worst, tokens / budget);
  if (tokens > budget || bytes > budget * 8) {
    failures++;
    if (failures <= 10)
      console.error(`FAIL answer ${n}: ${tokens} tokens, ${bytes} bytes for budget ${budget}`);
  }
}
enc.free();
fs.rmSync(dir, { recursive: true, force: true });
console.log(`tiktoken: ${n} answers counted; largest ${worst.toFixed(4)} of its budget`);
if (n === 0 || failures) {
  console.error(`${failures} answers over budget`);
  process.exit(1);
}
console.log('every answer within its token budget and byte ceiling (tiktoken)');
