#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Regenerates ucd16_tables.c with gen/gen_ucd16.mjs into a temporary file
// and checks it is byte-identical to the committed one.
//   node ucd16_fresh.cjs libprobemcp/src/core/tokenizer
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const dir = process.argv[2];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pmcp-ucd16-'));
const out = path.join(tmp, 'ucd16_tables.c');
const r = spawnSync(process.execPath, ['gen_ucd16.mjs', out], { cwd: path.join(dir, 'gen'), encoding: 'utf8' });
if (r.status !== 0) {
  console.error('generator failed (did npm ci run in gen/?):\n' + r.stderr);
  process.exit(1);
}
const a = fs.readFileSync(out);
const b = fs.readFileSync(path.join(dir, 'ucd16_tables.c'));
fs.rmSync(tmp, { recursive: true });
if (!a.equals(b)) {
  console.error('ucd16_tables.c differs from what gen/gen_ucd16.mjs generates: run npm run gen in gen/ and commit');
  process.exit(1);
}
console.log('ucd16_tables.c is fresh (' + b.length + ' bytes)');
