/**
 * The API reference page's heavy bodies over real HTTP: Scalar's script and the OpenAPI
 * document (both copies) come compressed for a client that accepts `br` or `gzip`, far below
 * their raw size, with an `ETag` per representation that a conditional request turns into a
 * 304 without the body; the script's versioned address may be cached for good. The external
 * API's JSON answers of 1 KiB or more are compressed too, and nothing is for a client that does
 * not ask.
 *
 * Node's fetch decodes the body and keeps the headers: `content-length` is the encoded size,
 * the decoded body the raw one.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { OPENAPI_URL } from '../../src/app.ts';
import { buildTestApp, createPortal, type TestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';

const ENCODED = { 'accept-encoding': 'br, gzip' };

/** The app listening on a free port of 127.0.0.1 (closed with the app in `t.after`). */
async function listening(testApp: TestApp): Promise<string> {
  await testApp.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = testApp.app.server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

/** A GET's status, headers, decoded size and body text. */
async function get(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  const body = Buffer.from(await res.arrayBuffer());
  return {
    status: res.status,
    header: (name: string) => res.headers.get(name),
    encodedBytes: Number(res.headers.get('content-length')),
    rawBytes: body.length,
    text: body.toString('utf8'),
  };
}

const [backend] = backends();

describe('the reference page: compressed, cached, revalidated', () => {
  test('the script: br or gzip far below 3.6 MB, its own ETag each, 304, immutable when versioned', async (t) => {
    const base = await listening(await buildTestApp(t, backend!));
    const page = await get(`${base}/docs/`, ENCODED);
    assert.equal(page.status, 200);
    const src = /<script[^>]*src="(js\/scalar\.js\?v=[A-Za-z0-9_-]{16})"/.exec(page.text)?.[1];
    assert.ok(src, 'the page names the script by its versioned address');

    const br = await get(`${base}/docs/${src}`, ENCODED);
    assert.equal(br.status, 200);
    assert.equal(br.header('content-encoding'), 'br');
    assert.match(String(br.header('content-type')), /javascript/);
    assert.ok(br.rawBytes > 3_000_000, `raw ${br.rawBytes}`);
    assert.ok(br.encodedBytes < br.rawBytes / 3, `br ${br.encodedBytes} of ${br.rawBytes}`);
    assert.equal(br.header('cache-control'), 'public, max-age=31536000, immutable');
    assert.match(String(br.header('vary')), /accept-encoding/i);
    const brTag = String(br.header('etag'));
    assert.match(brTag, /^"[A-Za-z0-9_-]{43}-br"$/);

    const again = await get(`${base}/docs/${src}`, { ...ENCODED, 'if-none-match': brTag });
    assert.equal(again.status, 304);
    assert.equal(again.rawBytes, 0);
    assert.equal(again.header('etag'), brTag);

    const gzip = await get(`${base}/docs/${src}`, { 'accept-encoding': 'gzip' });
    assert.equal(gzip.header('content-encoding'), 'gzip');
    assert.ok(gzip.encodedBytes < gzip.rawBytes / 3, `gzip ${gzip.encodedBytes}`);
    assert.equal(gzip.rawBytes, br.rawBytes);
    // Another representation, another validator: the br tag does not stand for the gzip bytes.
    const otherTag = await get(`${base}/docs/${src}`, {
      'accept-encoding': 'gzip',
      'if-none-match': brTag,
    });
    assert.equal(otherTag.status, 200);

    // Without the version (an old page or a hand-typed address): revalidated at each use.
    const unversioned = await get(`${base}/docs/js/scalar.js`, ENCODED);
    assert.equal(unversioned.header('cache-control'), 'no-cache');
    assert.equal(unversioned.header('etag'), brTag);
  });

  test('the document, at /docs and under the API: compressed, 304 on its ETag, no-cache', async (t) => {
    const base = await listening(await buildTestApp(t, backend!));
    for (const path of ['/docs/openapi.json', OPENAPI_URL]) {
      // Node's fetch asks for gzip and deflate unless told otherwise.
      const plain = await get(`${base}${path}`, { 'accept-encoding': 'identity' });
      assert.equal(plain.status, 200, path);
      assert.equal(plain.header('content-encoding'), null, `${path}: not asked, not encoded`);
      assert.equal(plain.encodedBytes, plain.rawBytes);
      assert.match(String(plain.header('etag')), /^"[A-Za-z0-9_-]{43}"$/);
      assert.equal(JSON.parse(plain.text).openapi, '3.1.0');

      const br = await get(`${base}${path}`, ENCODED);
      assert.equal(br.header('content-encoding'), 'br', path);
      assert.equal(br.text, plain.text, `${path}: the same document`);
      assert.ok(
        br.encodedBytes < br.rawBytes / 5,
        `${path}: br ${br.encodedBytes} of ${br.rawBytes}`,
      );
      assert.equal(br.header('cache-control'), 'no-cache');
      const tag = String(br.header('etag'));
      const conditional = await get(`${base}${path}`, { ...ENCODED, 'if-none-match': tag });
      assert.equal(conditional.status, 304, path);
      assert.equal(conditional.rawBytes, 0);
      const stale = await get(`${base}${path}`, { ...ENCODED, 'if-none-match': '"old"' });
      assert.equal(stale.status, 200);
    }
  });

  test('API answers of 1 KiB or more are compressed for a client that asks, and only then', async (t) => {
    const testApp = await buildTestApp(t, backend!);
    const { token } = await createPortal(testApp.services, {
      scopes: ['crm:contacts:read', 'crm:contacts:write'],
    });
    const base = await listening(testApp);
    for (let i = 0; i < 12; i++) {
      const res = await fetch(`${base}/api/v1/external/crm/contacts`, {
        method: 'POST',
        headers: { authorization: token, 'content-type': 'application/json' },
        body: JSON.stringify({ phone: `+1650555${String(1000 + i)}`, firstName: `Person ${i}` }),
      });
      assert.equal(res.status, 201, await res.text());
    }
    const url = `${base}/api/v1/external/crm/contacts?limit=20`;
    const br = await get(url, { ...ENCODED, authorization: token });
    assert.equal(br.status, 200);
    assert.equal(br.header('content-encoding'), 'br');
    assert.ok(br.rawBytes > 1024, `raw ${br.rawBytes}`);
    assert.equal(JSON.parse(br.text).data.items.length, 12);
    const plain = await get(url, { authorization: token, 'accept-encoding': 'identity' });
    assert.equal(plain.header('content-encoding'), null);
    assert.equal(plain.text, br.text);
    // A small answer is sent as is.
    const verify = await get(`${base}/api/v1/external/auth/verify`, {
      ...ENCODED,
      authorization: token,
    });
    assert.equal(verify.status, 200);
    assert.equal(verify.header('content-encoding'), null);
  });
});
