/**
 * The OpenAPI document as an SDK author meets it: `openapi-typescript` generates types from the
 * served document, a small client program written against them (openapi-fetch) type-checks
 * under the strictest options and then runs against the real server (verify, create a ticket,
 * read the error of a bad one), and Spectral's OpenAPI ruleset finds nothing, not even a warning.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { OPENAPI_URL } from '../../src/app.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { ROOT } from '../helpers/root.ts';
import { backends } from '../helpers/storage.ts';

/** The program a client author writes; `@ts-expect-error` lines prove the types are tight. */
const CLIENT = `
import createClient from 'openapi-fetch';
import type { components, paths } from './schema.ts';

type Ticket = components['schemas']['Ticket'];
type ErrorCode = components['schemas']['ErrorBody']['code'];

export async function main(baseUrl: string, token: string) {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: token } });
  const verify = await client.GET('/api/v1/external/auth/verify');
  if (!verify.data) throw new Error('verify failed');
  const scopes: components['schemas']['Scope'][] = verify.data.data.scopes;
  const portalCode: string = verify.data.data.portalCode;

  const created = await client.POST('/api/v1/external/support/tickets', {
    body: { subject: 'Printer on fire', description: 'Again.', priority: 'urgent', tags: ['hw'] },
    params: { header: { 'idempotency-key': 'k-1' } },
  });
  const ticket: Ticket | undefined = created.data?.data;
  const status: 'new' | 'open' | 'pending' | 'solved' | 'closed' | undefined = ticket?.status;

  // The list needs no \`limit\` (the server defaults it).
  const list = await client.GET('/api/v1/external/support/tickets', {
    params: { query: { status: 'new' } },
  });
  const listed: Ticket[] = list.data?.data.items ?? [];

  const bad = await client.POST('/api/v1/external/support/tickets', {
    body: { subject: ' ', description: 'x' },
  });
  const code: ErrorCode | undefined = bad.error?.error.code;
  const details = bad.error?.error.details?.map((d) => d.field + ': ' + d.message) ?? [];

  if (false as boolean) {
    // @ts-expect-error priority is an enum, not any string
    await client.POST('/api/v1/external/support/tickets', { body: { subject: 's', description: 'd', priority: 'asap' } });
    // @ts-expect-error subject is required
    await client.POST('/api/v1/external/support/tickets', { body: { description: 'd' } });
    // @ts-expect-error no such error code
    const nope: ErrorCode = 'teapot';
    void nope;
  }
  return { scopes, portalCode, ticket, status, listed: listed.length, code, details };
}

type SendMessage = components['schemas']['SendMessageRequest'];
type Message = components['schemas']['Message'];

/** One send of each kind (type-checked, not run: the server has no provider connection). */
export async function sendEachKind(baseUrl: string, token: string) {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: token } });
  const to = '+16505551234';
  const quote = { messageId: 'msg_1' };
  const bodies: SendMessage[] = [
    { to, type: 'text', text: { body: 'Hi', previewUrl: false }, context: quote },
    { to, type: 'image', image: { mediaId: 'med_1', caption: 'Look' } },
    { to, type: 'video', video: { link: 'https://example.com/v.mp4' } },
    { to, type: 'audio', audio: { mediaId: 'med_2' } },
    { to, type: 'document', document: { mediaId: 'med_3', caption: 'Invoice', filename: 'i.pdf' } },
    { to, type: 'sticker', sticker: { link: 'https://example.com/s.webp' } },
    { to, type: 'location', location: { latitude: 1.5, longitude: 2, name: 'Here' } },
    {
      to,
      type: 'interactive',
      interactive: {
        type: 'button',
        header: { type: 'text', text: 'Visit' },
        body: { text: 'Confirm?' },
        footer: { text: 'Thanks' },
        action: { buttons: [{ type: 'reply', reply: { id: 'yes', title: 'Yes' } }] },
      },
    },
    {
      to,
      type: 'interactive',
      interactive: {
        type: 'list',
        body: { text: 'Pick' },
        action: { button: 'Slots', sections: [{ title: 'AM', rows: [{ id: 'r1', title: '9h' }] }] },
      },
    },
    {
      to,
      type: 'interactive',
      interactive: {
        type: 'cta_url',
        header: { type: 'image', image: { mediaId: 'med_4' } },
        body: { text: 'Track' },
        action: { name: 'cta_url', parameters: { displayText: 'Open', url: 'https://e.com' } },
      },
    },
    { to, type: 'reaction', reaction: { messageId: 'msg_2', emoji: '👍' } },
    { to, type: 'template', template: { name: 'hello_world', language: 'en_US' }, context: quote },
  ];
  const sent: Message[] = [];
  for (const body of bodies) {
    const res = await client.POST('/api/v1/external/messaging/messages', { body });
    if (res.data) sent.push(res.data.data);
  }
  const kinds: Message['type'][] = sent.map((m) => m.type);
  const interactive: Message['interactive'] = sent[0]?.interactive;
  if (false as boolean) {
    // @ts-expect-error a caption is not part of an audio message
    const audio: SendMessage = { to, type: 'audio', audio: { link: 'https://e.com', caption: 'x' } };
    // @ts-expect-error the kind's object is named by its type
    const mismatch: SendMessage = { to, type: 'image', document: { mediaId: 'med_1' } };
    // @ts-expect-error no such kind
    const poll: SendMessage = { to, type: 'poll' };
    void [audio, mismatch, poll];
  }
  return { kinds, interactive };
}
`;

const [backend] = backends();

describe('OpenAPI document: generated client and Spectral', () => {
  test('openapi-typescript + openapi-fetch: the program type-checks and runs', async (t) => {
    const { app, services } = await buildTestApp(t, backend!);
    const document = (await app.inject({ url: OPENAPI_URL })).json();
    const dir = join(ROOT, 'test-output', `openapi-client-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(document, null, 2));
    writeFileSync(join(dir, 'schema.ts'), astToString(await openapiTS(document)));
    writeFileSync(join(dir, 'client.ts'), CLIENT);

    const program = ts.createProgram([join(dir, 'client.ts')], {
      target: ts.ScriptTarget.ES2023,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      noUncheckedIndexedAccess: true,
      exactOptionalPropertyTypes: true,
      allowImportingTsExtensions: true,
      noEmit: true,
      skipLibCheck: true,
      types: [],
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    });
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    assert.deepEqual(diagnostics, [], 'the generated types and the program type-check');

    const { token } = await createPortal(services, { code: '4242' });
    const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
    // Compiled as its author would before running it (the suite itself runs as JavaScript).
    const compiled = ts.transpileModule(CLIENT, {
      compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2023 },
    });
    writeFileSync(join(dir, 'client.js'), compiled.outputText);
    const client = (await import(pathToFileURL(join(dir, 'client.js')).href)) as {
      main(baseUrl: string, token: string): Promise<Record<string, unknown>>;
    };
    const result = await client.main(baseUrl, token);
    assert.equal(result.portalCode, '4242');
    assert.ok((result.scopes as string[]).includes('support:tickets:write'));
    assert.equal((result.ticket as { subject: string }).subject, 'Printer on fire');
    assert.equal(result.status, 'new');
    assert.equal(result.listed, 1);
    assert.equal(result.code, 'invalid_request');
    assert.deepEqual(result.details, [
      'body.subject: must not be blank nor contain control or bidirectional formatting characters',
    ]);
  });

  test("Spectral's OpenAPI ruleset: no error, no warning", async (t) => {
    const { app } = await buildTestApp(t, backend!);
    const dir = join(ROOT, 'test-output', `openapi-spectral-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'openapi.json');
    writeFileSync(file, (await app.inject({ url: OPENAPI_URL })).body);
    const spectral = join(ROOT, 'node_modules', '@stoplight', 'spectral-cli', 'dist', 'index.js');
    // `timeout` kills Spectral should it hang; a non-zero exit rejects with its output.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [spectral, 'lint', file, '--ruleset', join(ROOT, '.spectral.yaml'), '--fail-severity=warn'],
      { cwd: ROOT, timeout: 120_000 },
    );
    assert.match(stdout, /No results with a severity of 'warn' or higher found/);
  });
});
