// SPDX-License-Identifier: MIT
// probe-mcp-everything --stdio driven by the official TypeScript SDK client:
// every tool, resource, template, prompt and completion the conformance
// suite expects, plus logging, progress, sampling, elicitation,
// subscriptions, cancellation, validation and pipelining.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { binary, connect, expectError, sleep } from './lib.mjs';

const BIN = binary('EVERYTHING_BIN');
const start = (opts) => connect(BIN, ['--stdio'], opts);

// Runs fn(client) on a fresh connection and checks the server then exits 0
// on EOF (under ASan this also means no leak was found).
async function withServer(fn, opts) {
  const s = await start(opts);
  try {
    await fn(s.client, s);
  } finally {
    const code = await s.close();
    assert.equal(code, 0, `server exit status ${code}; stderr:\n${s.stderr}`);
  }
}

const CONFORMANCE_TOOLS = [
  'test_simple_text', 'test_image_content', 'test_audio_content',
  'test_embedded_resource', 'test_multiple_content_types',
  'test_tool_with_logging', 'test_error_handling', 'test_tool_with_progress',
  'test_sampling', 'test_elicitation', 'test_elicitation_sep1034_defaults',
  'test_elicitation_sep1330_enums', 'json_schema_2020_12_tool',
  'test_reconnection',
];

describe('lifecycle', () => {
  test('initialize negotiates and declares every capability', () => withServer(async (c) => {
    const info = c.getServerVersion();
    assert.equal(info.name, 'probe-mcp-everything');
    assert.ok(info.version, 'serverInfo.version is set');
    const caps = c.getServerCapabilities();
    for (const k of ['tools', 'resources', 'prompts', 'logging', 'completions'])
      assert.ok(caps[k], `capability ${k} declared: ${JSON.stringify(caps)}`);
    assert.equal(caps.resources.subscribe, true);
    assert.ok(c.getInstructions(), 'instructions are sent');
    assert.deepEqual(await c.ping(), {});
  }));
});

describe('tools', () => {
  test('tools/list has every conformance tool with a description and schema', () => withServer(async (c) => {
    const { tools } = await c.listTools();
    const names = tools.map((t) => t.name);
    for (const n of CONFORMANCE_TOOLS) assert.ok(names.includes(n), `${n} listed`);
    for (const t of tools) {
      assert.ok(t.description, `${t.name} has a description`);
      assert.equal(t.inputSchema.type, 'object', `${t.name} inputSchema is an object schema`);
    }
    const sampling = tools.find((t) => t.name === 'test_sampling');
    assert.equal(sampling.inputSchema.properties.prompt.type, 'string');
    assert.deepEqual(sampling.inputSchema.required, ['prompt']);
  }));

  test('a literal JSON Schema 2020-12 is kept exactly as written', () => withServer(async (c) => {
    const { tools } = await c.listTools();
    const t = tools.find((x) => x.name === 'json_schema_2020_12_tool');
    assert.deepEqual(t.inputSchema, {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: {
        address: {
          $anchor: 'addressDef',
          type: 'object',
          properties: { street: { type: 'string' }, city: { type: 'string' } },
        },
      },
      properties: {
        name: { type: 'string' },
        address: { $ref: '#/$defs/address' },
        contactMethod: { type: 'string', enum: ['phone', 'email'] },
        phone: { type: 'string' },
        email: { type: 'string' },
      },
      allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
      if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
      then: { required: ['phone'] },
      else: { required: ['email'] },
      additionalProperties: false,
    });
    const r = await c.callTool({
      name: t.name,
      arguments: { name: 'Ada', address: { city: 'London' }, contactMethod: 'email', email: 'ada@example.org' },
    });
    assert.match(r.content[0].text, /"city":"London"/);
  }));

  test('content tools return exactly the suite\'s contents', () => withServer(async (c) => {
    let r = await c.callTool({ name: 'test_simple_text' });
    assert.deepEqual(r.content, [{ type: 'text', text: 'This is a simple text response for testing.' }]);
    assert.ok(!r.isError);

    r = await c.callTool({ name: 'test_image_content', arguments: {} });
    assert.equal(r.content.length, 1);
    assert.equal(r.content[0].type, 'image');
    assert.equal(r.content[0].mimeType, 'image/png');
    assert.equal(Buffer.from(r.content[0].data, 'base64').subarray(1, 4).toString(), 'PNG');

    r = await c.callTool({ name: 'test_audio_content', arguments: {} });
    assert.equal(r.content[0].type, 'audio');
    assert.equal(r.content[0].mimeType, 'audio/wav');
    assert.equal(Buffer.from(r.content[0].data, 'base64').subarray(0, 4).toString(), 'RIFF');

    r = await c.callTool({ name: 'test_embedded_resource', arguments: {} });
    assert.deepEqual(r.content, [{ type: 'resource', resource: {
      uri: 'test://embedded-resource', mimeType: 'text/plain',
      text: 'This is an embedded resource content.' } }]);

    r = await c.callTool({ name: 'test_multiple_content_types', arguments: {} });
    assert.deepEqual(r.content.map((x) => x.type), ['text', 'image', 'resource']);
    assert.equal(r.content[0].text, 'Multiple content types test:');
    assert.deepEqual(JSON.parse(r.content[2].resource.text), { test: 'data', value: 123 });
    assert.equal(r.content[2].resource.mimeType, 'application/json');
  }));

  test('test_error_handling is an isError result, not a protocol error', () => withServer(async (c) => {
    const r = await c.callTool({ name: 'test_error_handling', arguments: {} });
    assert.equal(r.isError, true);
    assert.equal(r.content[0].text, 'This tool intentionally returns an error for testing');
  }));

  test('test_reconnection answers over stdio (no stream to close)', () => withServer(async (c) => {
    const r = await c.callTool({ name: 'test_reconnection', arguments: {} });
    assert.match(r.content[0].text, /Reconnection test completed successfully/);
  }));

  test('modes, annotations, outputSchema and structuredContent', () => withServer(async (c) => {
    const { tools } = await c.listTools();
    const t = tools.find((x) => x.name === 'calculate');
    assert.deepEqual(t.annotations && {
      readOnlyHint: t.annotations.readOnlyHint, idempotentHint: t.annotations.idempotentHint,
      destructiveHint: t.annotations.destructiveHint, openWorldHint: t.annotations.openWorldHint,
    }, { readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false });
    assert.equal(t.outputSchema.type, 'object');
    assert.deepEqual(t.inputSchema.properties.mode.enum?.slice().sort(), ['add', 'negate']);
    assert.ok(t.inputSchema.required.includes('mode'), 'mode is required (no default)');
    let r = await c.callTool({ name: 'calculate', arguments: { mode: 'add', a: 2, b: 3.5 } });
    assert.deepEqual(r.structuredContent, { value: 5.5 });
    assert.deepEqual(JSON.parse(r.content[0].text), { value: 5.5 });
    r = await c.callTool({ name: 'calculate', arguments: { mode: 'negate', x: 4 } });
    assert.deepEqual(r.structuredContent, { value: -4 });
  }));

  test('the engine validates arguments before the handler runs', () => withServer(async (c) => {
    let e = await expectError(() => c.callTool({ name: 'calculate', arguments: { a: 1, b: 2 } }));
    assert.match(e.message, /mode/, 'a missing mode is named');
    e = await expectError(() => c.callTool({ name: 'calculate', arguments: { mode: 'add', a: 1, b: 2, x: 3 } }));
    assert.match(e.message, /\bx\b/, `the argument the mode does not read is named: ${e.message}`);
    assert.match(e.message, /add/, `the mode is named: ${e.message}`);
    e = await expectError(() => c.callTool({ name: 'calculate', arguments: { mode: 'add', a: 'one', b: 2 } }));
    assert.match(e.message, /\/a\b|"a"|'a'|\ba\b/, `the wrong-typed argument is named: ${e.message}`);
    e = await expectError(() => c.callTool({ name: 'calculate', arguments: { mode: 'multiply', a: 1, b: 2 } }));
    assert.match(e.message, /multiply/, `the unknown mode is named: ${e.message}`);
    e = await expectError(() => c.callTool({ name: 'sleep', arguments: { ms: 600000 } }));
    assert.match(e.message, /ms/, `the out-of-range argument is named: ${e.message}`);
    e = await expectError(() => c.callTool({ name: 'test_sampling', arguments: {} }));
    assert.match(e.message, /prompt/, `the missing required argument is named: ${e.message}`);
    e = await expectError(() => c.callTool({ name: 'no_such_tool', arguments: {} }));
    assert.match(e.message, /no_such_tool/, `the unknown tool is named: ${e.message}`);
  }));

  test('pipelined calls all come back, each to its own request', () => withServer(async (c) => {
    const n = 300;
    const calls = [];
    for (let i = 0; i < n; i++)
      calls.push(c.callTool({ name: 'echo', arguments: { text: `call ${i} é✓` } }));
    const res = await Promise.all(calls);
    res.forEach((r, i) => assert.equal(r.content[0].text, `call ${i} é✓`));
  }));

  test('a 4 MiB argument goes through intact', () => withServer(async (c) => {
    const text = 'abcdefghijklmnop'.repeat(256 * 1024);
    const r = await c.callTool({ name: 'echo', arguments: { text } });
    assert.equal(r.content[0].text.length, text.length);
    assert.equal(r.content[0].text, text);
  }));
});

describe('logging and progress', () => {
  test('test_tool_with_logging sends three messages, filtered by setLevel', () => withServer(async (c) => {
    const logs = [];
    c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { logs.push(n.params); });
    await c.setLoggingLevel('debug');
    const r = await c.callTool({ name: 'test_tool_with_logging', arguments: {} });
    assert.equal(r.content[0].text, 'Tool with logging executed successfully');
    await sleep(50);
    assert.deepEqual(logs.map((l) => [l.level, l.data]), [
      ['info', 'Tool execution started'],
      ['info', 'Tool processing data'],
      ['info', 'Tool execution completed'],
    ]);
    logs.length = 0;
    assert.deepEqual(await c.setLoggingLevel('warning'), {});
    await c.callTool({ name: 'test_tool_with_logging', arguments: {} });
    await sleep(50);
    assert.deepEqual(logs, [], 'info messages are dropped at level warning');
  }));

  test('test_tool_with_progress reports 0, 50, 100 of 100', () => withServer(async (c) => {
    const seen = [];
    const r = await c.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined,
      { onprogress: (p) => seen.push(p) });
    assert.ok(!r.isError);
    assert.deepEqual(seen.map((p) => [p.progress, p.total]), [[0, 100], [50, 100], [100, 100]]);
    assert.equal(seen[1].message, 'Completed step 50 of 100');
  }));
});

describe('server-to-client requests', () => {
  test('test_sampling asks the client and returns its answer', async () => {
    let asked = null;
    await withServer(async (c) => {
      const r = await c.callTool({ name: 'test_sampling', arguments: { prompt: 'Say "hi"' } });
      assert.deepEqual(r.content, [{ type: 'text', text: 'LLM response: hello from the client' }]);
    }, {
      capabilities: { sampling: {} },
      setup: (c) => c.setRequestHandler(CreateMessageRequestSchema, async (req) => {
        asked = req.params;
        return { role: 'assistant', content: { type: 'text', text: 'hello from the client' },
          model: 'test-model', stopReason: 'endTurn' };
      }),
    });
    assert.equal(asked.maxTokens, 100);
    assert.deepEqual(asked.messages, [{ role: 'user', content: { type: 'text', text: 'Say "hi"' } }]);
  });

  test('a sampling error from the client becomes an isError result', () => withServer(async (c) => {
    const r = await c.callTool({ name: 'test_sampling', arguments: { prompt: 'x' } });
    assert.equal(r.isError, true);
    assert.match(r.content[0].text, /sampling\/createMessage failed/);
    assert.match(r.content[0].text, /model unavailable/, 'the client\'s message is passed on');
  }, {
    capabilities: { sampling: {} },
    setup: (c) => c.setRequestHandler(CreateMessageRequestSchema, async () => {
      throw new Error('model unavailable');
    }),
  }));

  test('without the capability, sampling and elicitation are refused', () => withServer(async (c) => {
    let r = await c.callTool({ name: 'test_sampling', arguments: { prompt: 'x' } });
    assert.equal(r.isError, true);
    assert.match(r.content[0].text, /sampling/);
    r = await c.callTool({ name: 'test_elicitation', arguments: { message: 'x' } });
    assert.equal(r.isError, true);
    assert.match(r.content[0].text, /elicitation/);
  }));

  test('test_elicitation asks for username and email', async () => {
    let asked = null;
    await withServer(async (c) => {
      const r = await c.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
      assert.equal(r.content[0].text,
        'User response: action=accept, content={"username":"testuser","email":"test@example.com"}');
    }, {
      capabilities: { elicitation: {} },
      setup: (c) => c.setRequestHandler(ElicitRequestSchema, async (req) => {
        asked = req.params;
        return { action: 'accept', content: { username: 'testuser', email: 'test@example.com' } };
      }),
    });
    assert.equal(asked.message, 'Who are you?');
    assert.deepEqual(asked.requestedSchema.required, ['username', 'email']);
    assert.equal(asked.requestedSchema.properties.email.type, 'string');
  });

  test('SEP-1034 defaults and SEP-1330 enums are in the requested schemas', async () => {
    const asked = [];
    await withServer(async (c) => {
      let r = await c.callTool({ name: 'test_elicitation_sep1034_defaults', arguments: {} });
      assert.match(r.content[0].text, /^Elicitation completed: action=decline/);
      r = await c.callTool({ name: 'test_elicitation_sep1330_enums', arguments: {} });
      assert.match(r.content[0].text, /^Elicitation completed: action=decline/);
    }, {
      capabilities: { elicitation: {} },
      setup: (c) => c.setRequestHandler(ElicitRequestSchema, async (req) => {
        asked.push(req.params.requestedSchema.properties);
        return { action: 'decline' };
      }),
    });
    const [d, e] = asked;
    assert.deepEqual([d.name.default, d.age.default, d.score.default, d.status.default, d.verified.default],
      ['John Doe', 30, 95.5, 'active', true]);
    assert.deepEqual([d.name.type, d.age.type, d.score.type, d.status.type, d.verified.type],
      ['string', 'integer', 'number', 'string', 'boolean']);
    assert.ok(d.status.enum.includes(d.status.default));
    assert.deepEqual(e.untitledSingle.enum, ['option1', 'option2', 'option3']);
    assert.ok(e.titledSingle.oneOf.every((o) => typeof o.const === 'string' && typeof o.title === 'string'));
    assert.equal(e.titledSingle.enum, undefined);
    assert.equal(e.legacyEnum.enumNames.length, e.legacyEnum.enum.length);
    assert.equal(e.untitledMulti.type, 'array');
    assert.deepEqual(e.untitledMulti.items.enum, ['option1', 'option2', 'option3']);
    assert.ok(e.titledMulti.items.anyOf.every((o) => typeof o.const === 'string' && typeof o.title === 'string'));
  });
});

describe('resources', () => {
  test('list, templates and reads', () => withServer(async (c) => {
    const { resources } = await c.listResources();
    const uris = resources.map((r) => r.uri).sort();
    // the skill's files are resources too (the Skills extension)
    assert.deepEqual(uris, ['skill://git-workflow/SKILL.md',
      'skill://git-workflow/reference/conventions.md',
      'test://static-binary', 'test://static-text', 'test://watched-resource']);
    for (const r of resources) assert.ok(r.name && r.description, `${r.uri} has name and description`);
    const { resourceTemplates } = await c.listResourceTemplates();
    assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate), ['test://template/{id}/data']);

    let r = await c.readResource({ uri: 'test://static-text' });
    assert.deepEqual(r.contents, [{ uri: 'test://static-text', mimeType: 'text/plain',
      text: 'This is the content of the static text resource.' }]);
    r = await c.readResource({ uri: 'test://static-binary' });
    assert.equal(r.contents[0].mimeType, 'image/png');
    assert.equal(Buffer.from(r.contents[0].blob, 'base64').subarray(1, 4).toString(), 'PNG');
    r = await c.readResource({ uri: 'test://template/123/data' });
    assert.equal(r.contents[0].uri, 'test://template/123/data');
    assert.deepEqual(JSON.parse(r.contents[0].text), { id: '123', templateTest: true, data: 'Data for ID: 123' });
  }));

  test('an unknown resource is error -32002 naming it', () => withServer(async (c) => {
    const e = await expectError(() => c.readResource({ uri: 'test://nope' }));
    assert.equal(e.code, -32002);
  }));

  test('subscribe gets updates; unsubscribe stops them', () => withServer(async (c) => {
    const updates = [];
    c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
    assert.deepEqual(await c.subscribeResource({ uri: 'test://watched-resource' }), {});
    await c.callTool({ name: 'test_watched_resource_update', arguments: { content: 'v2' } });
    await sleep(50);
    assert.deepEqual(updates, ['test://watched-resource']);
    const r = await c.readResource({ uri: 'test://watched-resource' });
    assert.equal(r.contents[0].text, 'v2');
    assert.deepEqual(await c.unsubscribeResource({ uri: 'test://watched-resource' }), {});
    await c.callTool({ name: 'test_watched_resource_update', arguments: { content: 'v3' } });
    await sleep(50);
    assert.deepEqual(updates, ['test://watched-resource'], 'no update after unsubscribe');
  }));
});

describe('prompts and completion', () => {
  test('the five prompts', () => withServer(async (c) => {
    const { prompts } = await c.listPrompts();
    assert.deepEqual(prompts.map((p) => p.name).sort(), ['test_input_required_result_prompt',
      'test_prompt_with_arguments', 'test_prompt_with_embedded_resource', 'test_prompt_with_image',
      'test_simple_prompt']);
    for (const p of prompts) assert.ok(p.description);
    const withArgs = prompts.find((p) => p.name === 'test_prompt_with_arguments');
    assert.deepEqual(withArgs.arguments.map((a) => [a.name, a.required]), [['arg1', true], ['arg2', true]]);

    let r = await c.getPrompt({ name: 'test_simple_prompt' });
    assert.deepEqual(r.messages, [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }]);
    r = await c.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'hello', arg2: 'world' } });
    assert.equal(r.messages[0].content.text, "Prompt with arguments: arg1='hello', arg2='world'");
    r = await c.getPrompt({ name: 'test_prompt_with_embedded_resource', arguments: { resourceUri: 'test://example-resource' } });
    assert.deepEqual(r.messages[0].content, { type: 'resource', resource: {
      uri: 'test://example-resource', mimeType: 'text/plain', text: 'Embedded resource content for testing.' } });
    assert.equal(r.messages[1].content.text, 'Please process the embedded resource above.');
    r = await c.getPrompt({ name: 'test_prompt_with_image' });
    assert.equal(r.messages[0].content.type, 'image');
    assert.equal(r.messages[0].content.mimeType, 'image/png');
    assert.equal(r.messages[1].content.text, 'Please analyze the image above.');
  }));

  test('a missing required prompt argument or unknown prompt is an error', () => withServer(async (c) => {
    let e = await expectError(() => c.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'x' } }));
    assert.equal(e.code, -32602);
    e = await expectError(() => c.getPrompt({ name: 'no_such_prompt' }));
    assert.match(e.message, /no_such_prompt/);
  }));

  test('completion of prompt arguments and template variables', () => withServer(async (c) => {
    let r = await c.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
      argument: { name: 'arg1', value: 'te' } });
    assert.deepEqual(r.completion.values, ['testValue1', 'testValue2']);
    assert.equal(r.completion.total, 2);
    r = await c.complete({ ref: { type: 'ref/resource', uri: 'test://template/{id}/data' },
      argument: { name: 'id', value: '1' } });
    assert.deepEqual(r.completion.values, ['1', '123']);
    r = await c.complete({ ref: { type: 'ref/prompt', name: 'test_simple_prompt' },
      argument: { name: 'x', value: '' } });
    assert.deepEqual(r.completion.values, []);
  }));
});

describe('concurrency and cancellation', () => {
  test('ping is answered while a slow tool runs', () => withServer(async (c) => {
    const slow = c.callTool({ name: 'sleep', arguments: { ms: 1500 } });
    const t0 = Date.now();
    await c.ping();
    assert.ok(Date.now() - t0 < 500, `ping took ${Date.now() - t0} ms behind a slow call`);
    const r = await slow;
    assert.equal(r.content[0].text, 'slept 1500 ms');
  }));

  test('cancellation reaches running handlers, which stop', () => withServer(async (c) => {
    // More long calls than there are workers: if cancelled handlers kept
    // running, the call after them would wait 30 s.
    const aborts = [];
    const calls = [];
    for (let i = 0; i < 8; i++) {
      const ac = new AbortController();
      aborts.push(ac);
      calls.push(c.callTool({ name: 'sleep', arguments: { ms: 30000 } }, undefined,
        { signal: ac.signal, timeout: 60000 }).then(() => 'answered', () => 'rejected'));
    }
    await sleep(200);
    aborts.forEach((a) => a.abort('test cancels'));
    assert.deepEqual(await Promise.all(calls), Array(8).fill('rejected'));
    const t0 = Date.now();
    const r = await c.callTool({ name: 'sleep', arguments: { ms: 10 } });
    assert.equal(r.content[0].text, 'slept 10 ms');
    assert.ok(Date.now() - t0 < 3000, `a call after cancelling took ${Date.now() - t0} ms`);
  }));
});
