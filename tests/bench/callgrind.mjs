// SPDX-License-Identifier: MIT
// Instruction counts for the benches' deterministic mode (--callgrind):
// CPU time on this shared 2-core machine swings by 30-60% between rounds,
// which hides a 10% difference; callgrind counts the instructions a server
// executes, which the load does not change. Used by stdio/bench.mjs and
// http/run.mjs; needs valgrind (and callgrind_control for a server that
// runs until it is stopped).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

// A directory for the profiles of one run; removed by done().
export function profiles() {
  const dir = mkdtempSync(path.join(tmpdir(), 'pmcp-callgrind-'));
  let n = 0;
  return {
    // A fresh output file name.
    next: () => path.join(dir, `cg.${++n}`),
    done: () => rmSync(dir, { recursive: true, force: true }),
  };
}

// The command prefix that runs a program under callgrind, writing @p out.
export function valgrind(out, extra = []) {
  return ['valgrind', '-q', '--tool=callgrind', `--callgrind-out-file=${out}`, ...extra];
}

// Instructions counted in a profile (its "summary", or "totals").
export function instructions(file) {
  const text = readFileSync(file, 'utf8');
  const m = text.match(/^summary:\s*(\d+)/m) || text.match(/^totals:\s*(\d+)/m);
  if (!m) throw new Error(`no instruction count in ${file}`);
  return Number(m[1]);
}

// Zeroes the counters of a running callgrind process (after a warm-up)...
export function zero(pid) {
  execFileSync('callgrind_control', ['-z', String(pid)], { stdio: 'ignore' });
}

// ...and writes them out: returns the instructions since zero().
export function dump(pid, out) {
  execFileSync('callgrind_control', ['-d', String(pid)], { stdio: 'ignore' });
  return instructions(`${out}.1`);
}

export function available() {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
    execFileSync('callgrind_control', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

// "met " / "MISS" against the 10% target, with the ratio.
export function verdict(ratio) {
  return `${ratio <= 1.10 ? 'met ' : 'MISS'}  ${ratio.toFixed(3)}`;
}
