/**
 * The OpenAPI document says what the API really takes and answers: a media download's real
 * content types (not only `application/octet-stream`), RFC 7396's media type on every PATCH
 * (which the routes accept), and an introduction that names every operation taking an
 * `Idempotency-Key` and the bodies that are not JSON of 64 KiB (the multipart upload).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { OPENAPI_URL } from '../../src/app.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';

interface Operation {
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, { content?: Record<string, unknown> }>;
}

const [backend] = backends();

describe('OpenAPI: bodies and content types', () => {
  test('media types of the download, merge patch, idempotency and the multipart upload', async (t) => {
    const { app, services } = await buildTestApp(t, backend!);
    const document = (await app.inject({ url: OPENAPI_URL })).json<{
      info: { description: string };
      paths: Record<string, Record<string, Operation>>;
    }>();
    const path = (suffix: string) => {
      const key = Object.keys(document.paths).find((p) => p.endsWith(suffix));
      assert.ok(key, suffix);
      return document.paths[key]!;
    };

    const download = path('/messaging/media/{id}').get!.responses['200']!.content!;
    for (const type of ['image/jpeg', 'image/png', 'audio/ogg', 'video/mp4', 'application/pdf'])
      assert.ok(type in download, type);

    const patches = Object.values(document.paths).flatMap((item) =>
      item.patch ? [item.patch] : [],
    );
    assert.ok(patches.length >= 2, 'contacts and drafts');
    for (const patch of patches)
      assert.deepEqual(Object.keys(patch.requestBody!.content).sort(), [
        'application/json',
        'application/merge-patch+json',
      ]);

    const intro = document.info.description;
    for (const named of ['/messaging/messages', '/crm/contacts', 'multipart/form-data', '100 MiB'])
      assert.ok(intro.includes(named), named);
    assert.doesNotMatch(
      intro,
      /request bodies are JSON \(`Content-Type: application\/json`\), at most 64 KiB\.$/,
    );

    // The document has a validator: a request naming it gets 304 without the body.
    const first = await app.inject({ url: OPENAPI_URL });
    const etag = String(first.headers.etag);
    assert.match(etag, /^"[A-Za-z0-9_-]{43}"$/);
    const again = await app.inject({ url: OPENAPI_URL, headers: { 'if-none-match': etag } });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    const other = await app.inject({ url: OPENAPI_URL, headers: { 'if-none-match': '"x"' } });
    assert.equal(other.statusCode, 200);

    // What the document says of PATCH holds: a merge patch is taken.
    const { token } = await createPortal(services, { scopes: ['crm:contacts:write'] });
    const created = await app.inject({
      method: 'POST',
      url: '/api/v1/external/crm/contacts',
      headers: { authorization: token },
      payload: { phone: '+16505551234', firstName: 'Ada' },
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json<{ data: { id: string } }>().data.id;
    const patched = await app.inject({
      method: 'PATCH',
      url: `/api/v1/external/crm/contacts/${id}`,
      headers: { authorization: token, 'content-type': 'application/merge-patch+json' },
      payload: JSON.stringify({ firstName: null, lastName: 'Lovelace' }),
    });
    assert.equal(patched.statusCode, 200, patched.body);
  });
});
