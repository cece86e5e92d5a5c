// SPDX-License-Identifier: MIT
// The stdio framing of a server, byte by byte (no SDK): malformed lines,
// partial reads, CRLF, very large lines, EOF while a call runs. Runs against
// the binary in $STDIO_BIN with the arguments in $STDIO_ARGS (JSON array).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { binary, sleep } from './lib.mjs';

const BIN = binary('STDIO_BIN');
const ARGS = JSON.parse(process.env.STDIO_ARGS || '[]');
// The echo and sleep tools of probe-mcp-everything; servers without them
// skip the tests that need them (STDIO_FIXTURES=0).
const FIXTURES = process.env.STDIO_FIXTURES !== '0';
const TOOL = 'echo';

// Every server started, so a failed test cannot leave one running.
const procs = [];
after(() => procs.forEach((p) => { if (p.exitCode === null) p.kill('SIGKILL'); }));

// A server process with a line reader on its stdout.
function start() {
  const proc = spawn(BIN, ARGS, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env } });
  procs.push(proc);
  const lines = [];
  const waiters = [];
  let stderr = '';
  proc.stdout.setEncoding('utf8');
  // Chunks are kept apart until a newline arrives, so a 64 MiB reply is
  // not rescanned (or recopied) once per chunk.
  let parts = [];
  proc.stdout.on('data', (d) => {
    let nl;
    while ((nl = d.indexOf('\n')) >= 0) {
      parts.push(d.slice(0, nl));
      lines.push(parts.join(''));
      parts = [];
      d = d.slice(nl + 1);
      while (waiters.length && lines.length) waiters.shift()(lines.shift());
    }
    if (d.length) parts.push(d);
  });
  proc.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((r) => proc.once('exit', (code, sig) => r(sig ?? code)));
  return {
    proc,
    exited,
    get stderr() { return stderr; },
    write: (s) => new Promise((r) => proc.stdin.write(s, r)),
    // The next line on stdout, parsed (every line must be JSON-RPC).
    next: (ms = 10000) => new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no line within ${ms} ms; stderr: ${stderr}`)), ms);
      const take = (l) => {
        clearTimeout(t);
        let m;
        try { m = JSON.parse(l); } catch { reject(new Error(`stdout line is not JSON: ${l.slice(0, 200)}`)); return; }
        for (const x of Array.isArray(m) ? m : [m])
          assert.equal(x.jsonrpc, '2.0', `not a JSON-RPC message: ${l.slice(0, 200)}`);
        resolve(m);
      };
      if (lines.length) take(lines.shift()); else waiters.push(take);
    }),
  };
}

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: {
  protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}';

async function ready() {
  const s = start();
  await s.write(INIT + '\n');
  const r = await s.next();
  assert.equal(r.id, 0);
  assert.ok(r.result.protocolVersion);
  await s.write(INITIALIZED + '\n');
  return s;
}

async function endOk(s) {
  s.proc.stdin.end();
  const code = await s.exited;
  assert.equal(code, 0, `exit status ${code} at EOF; stderr:\n${s.stderr}`);
}

test('malformed lines get an error reply and the server stays up', async () => {
  const s = await ready();
  await s.write('{"jsonrpc":"2.0","id":1,"method":\n');
  let r = await s.next();
  assert.equal(r.error.code, -32700);
  assert.equal(r.id, null);
  await s.write('[1,2\n');
  r = await s.next();
  assert.equal(r.error.code, -32700);
  await s.write('{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}\n');
  r = await s.next();
  assert.equal(r.error.code, -32600, 'an object id is an invalid request');
  await s.write('{"jsonrpc":"2.0","id":"p","method":"ping"}\n');
  r = await s.next();
  assert.deepEqual(r, { jsonrpc: '2.0', id: 'p', result: {} });
  await endOk(s);
});

test('ids are echoed exactly; unknown methods are -32601', async () => {
  const s = await ready();
  await s.write('{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}\n');
  assert.equal((await s.next()).id, 9007199254740991);
  await s.write('{"jsonrpc":"2.0","id":"ünï\\"code","method":"ping"}\n');
  assert.equal((await s.next()).id, 'ünï"code');
  await s.write('{"jsonrpc":"2.0","id":3,"method":"no/such"}\n');
  const r = await s.next();
  assert.equal(r.id, 3);
  assert.equal(r.error.code, -32601);
  await endOk(s);
});

test('a message split across many writes, and CRLF endings', { skip: !FIXTURES }, async () => {
  const s = await ready();
  const msg = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call',
    params: { name: TOOL, arguments: { text: 'split in pieces' } } });
  for (let i = 0; i < msg.length; i += 5) {
    await s.write(msg.slice(i, i + 5));
    if (i % 40 === 0) await sleep(2);
  }
  await s.write('\r\n');
  const r = await s.next();
  assert.equal(r.id, 7);
  assert.equal(r.result.content[0].text, 'split in pieces');
  // Two messages in one write, one of them with CRLF; blank lines ignored.
  await s.write('{"jsonrpc":"2.0","id":8,"method":"ping"}\r\n\n\n{"jsonrpc":"2.0","id":9,"method":"ping"}\n');
  const ids = [(await s.next()).id, (await s.next()).id].sort();
  assert.deepEqual(ids, [8, 9]);
  await endOk(s);
});

// The default line limit is 16 MiB (--max-line of probe-mcp-stdio).
test('a line of 15 MiB (under the 16 MiB limit) is handled', { timeout: 120000 }, async () => {
  const s = await ready();
  const text = 'x'.repeat(15 * 1024 * 1024);
  // With the fixtures, echo it back; otherwise a ping carrying it in params.
  const msg = FIXTURES
    ? JSON.stringify({ jsonrpc: '2.0', id: 'big', method: 'tools/call',
      params: { name: TOOL, arguments: { text } } })
    : JSON.stringify({ jsonrpc: '2.0', id: 'big', method: 'ping', params: { _meta: { pad: text } } });
  assert.ok(msg.length > 15 * 1024 * 1024 && msg.length < 16 * 1024 * 1024);
  s.proc.stdin.write(msg + '\n');
  const r = await s.next(110000);
  assert.equal(r.id, 'big');
  if (FIXTURES) assert.equal(r.result.content[0].text.length, text.length);
  else assert.deepEqual(r.result, {});
  // The memory of the huge message is given back once it is answered.
  await s.write('{"jsonrpc":"2.0","id":"after","method":"ping"}\n');
  assert.equal((await s.next()).id, 'after');
  const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${s.proc.pid}/status`, 'utf8'))[1]);
  console.log(`# VmRSS after the 15 MiB message: ${rss} kB`);
  assert.ok(process.env.ASAN_OPTIONS !== undefined || rss < 16 * 1024,
    `VmRSS ${rss} kB after a 15 MiB message was answered`);
  await endOk(s);
});

test('a line over the 16 MiB limit is refused with an error; the server reads on', { timeout: 120000 }, async () => {
  const s = await ready();
  const text = 'x'.repeat(40 * 1024 * 1024);
  s.proc.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 'big', method: 'ping',
    params: { _meta: { pad: text } } }) + '\n');
  const r = await s.next(110000);
  assert.equal(r.id, null);
  assert.equal(r.error.code, -32600);
  assert.match(r.error.message, /too long/);
  await s.write('{"jsonrpc":"2.0","id":"after","method":"ping"}\n');
  assert.equal((await s.next()).id, 'after');
  const rss = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${s.proc.pid}/status`, 'utf8'))[1]);
  console.log(`# peak RSS while skipping a 40 MiB line: ${rss} kB`);
  assert.ok(process.env.ASAN_OPTIONS !== undefined || rss < 40 * 1024,
    `peak RSS ${rss} kB: the refused line was held`);
  await endOk(s);
});

test('EOF while a call runs: the call is answered, then exit 0', { skip: !FIXTURES }, async () => {
  const s = await ready();
  await s.write('{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"sleep","arguments":{"ms":300}}}\n');
  s.proc.stdin.end();
  const r = await s.next();
  assert.equal(r.id, 'slow');
  assert.equal(r.result.content[0].text, 'slept 300 ms');
  assert.equal(await s.exited, 0);
});

test('one write holding a slow call, pings and calls: the quick answers do not wait for the slow one', { skip: !FIXTURES }, async () => {
  const s = await ready();
  // All in one write, so the server reads them in one go and gathers the
  // replies it makes on its reading thread; the slow call runs on a worker
  // and must not hold them back, nor be lost among them.
  const msgs = ['{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"sleep","arguments":{"ms":3000}}}'];
  for (let i = 0; i < 50; i++) {
    msgs.push(`{"jsonrpc":"2.0","id":"p${i}","method":"ping"}`);
    msgs.push(`{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"${TOOL}","arguments":{"text":"t${i}"}}}`);
  }
  await s.write(msgs.join('\n') + '\n');
  const seen = new Map();
  for (let k = 0; k < 101; k++) {
    const r = await s.next(30000);
    seen.set(r.id, r);
    if (r.id === 'slow')
      assert.equal(seen.size, 101, `the slow call answered before ${101 - seen.size} quick ones`);
  }
  assert.equal(seen.get('slow').result.content[0].text, 'slept 3000 ms');
  for (let i = 0; i < 50; i++) {
    assert.deepEqual(seen.get(`p${i}`).result, {});
    assert.equal(seen.get(i).result.content[0].text, `t${i}`);
  }
  await endOk(s);
});

test('a last line without a newline is still handled at EOF', async () => {
  const s = await ready();
  s.proc.stdin.end('{"jsonrpc":"2.0","id":"last","method":"ping"}');
  const r = await s.next();
  assert.equal(r.id, 'last');
  assert.equal(await s.exited, 0);
});

test('requests before initialize are refused', async () => {
  const s = start();
  await s.write('{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n');
  const r = await s.next();
  assert.equal(r.id, 1);
  assert.ok(r.error, `tools/list before initialize must fail: ${JSON.stringify(r)}`);
  await endOk(s);
});

function initWith(version) {
  return JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: {
    protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) + '\n';
}

test('version negotiation: the four known versions, else the latest', async () => {
  for (const [asked, got] of [['2025-11-25', '2025-11-25'], ['2025-06-18', '2025-06-18'],
    ['2025-03-26', '2025-03-26'], ['2024-11-05', '2024-11-05'], ['1999-01-01', '2025-11-25']]) {
    const s = start();
    await s.write(initWith(asked));
    const r = await s.next();
    assert.equal(r.result.protocolVersion, got, `asked ${asked}`);
    await endOk(s);
  }
});

test('batches: answered as a batch under 2025-03-26, refused under 2025-06-18', async () => {
  const batch = '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"},'
    + '{"jsonrpc":"2.0","method":"notifications/initialized"}]\n';
  let s = start();
  await s.write(initWith('2025-03-26'));
  await s.next();
  await s.write(INITIALIZED + '\n' + batch);
  let r = await s.next();
  assert.ok(Array.isArray(r), `a batch reply: ${JSON.stringify(r)}`);
  assert.deepEqual(r.map((m) => m.id).sort(), [1, 2]);
  await endOk(s);
  s = start();
  await s.write(initWith('2025-06-18'));
  await s.next();
  await s.write(INITIALIZED + '\n' + batch);
  r = await s.next();
  assert.equal(r.error.code, -32600);
  await endOk(s);
});
