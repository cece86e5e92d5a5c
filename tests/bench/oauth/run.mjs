// SPDX-License-Identifier: MIT
// OAuth server figures (not a test): one whole flow (registration, sign-in
// with PBKDF2, consent, code exchange), N refresh rotations, N /mcp
// initialize calls with an access token, N metadata fetches; wall-clock
// milliseconds per step. Run from the source root after a build:
//   PROBE_MCP_HTTP=build/frontends/http/probe-mcp-http PROBE_CLI=build/frontends/cli/probe \
//     node tests/bench/oauth/run.mjs
import { performance } from 'node:perf_hooks';
import { rmSync } from 'node:fs';
import * as L from '../../integration/oauth/lib.mjs';
const env = L.makeStore();
const srv = await L.startServer(L.HTTP, ['--store', env.store]);
const port = srv.port;
let t0 = performance.now();
const c = await L.connect(port, { access: 'read' });
const flowMs = performance.now() - t0;
let rt = c.tokens.refresh_token, at = c.tokens.access_token;
const N = 200;
t0 = performance.now();
for (let i = 0; i < N; i++) {
  const r = await L.form(port, '/oauth/token', { grant_type: 'refresh_token', refresh_token: rt, client_id: c.client });
  rt = r.json.refresh_token; at = r.json.access_token;
}
const refreshMs = (performance.now() - t0) / N;
t0 = performance.now();
for (let i = 0; i < N; i++) await L.mcpInit(port, { authorization: `Bearer ${at}` });
const initMs = (performance.now() - t0) / N;
t0 = performance.now();
for (let i = 0; i < N; i++) await L.raw(port, { method: 'GET', path: '/.well-known/oauth-authorization-server/oauth' });
const metaMs = (performance.now() - t0) / N;
console.log(JSON.stringify({ full_flow_ms: flowMs.toFixed(0), refresh_ms: refreshMs.toFixed(2), mcp_initialize_with_bearer_ms: initMs.toFixed(2), metadata_ms: metaMs.toFixed(2) }));
await srv.stop();
rmSync(env.dir, { recursive: true, force: true });
