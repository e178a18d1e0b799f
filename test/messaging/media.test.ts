/**
 * `GET /messaging/media/{id}` end to end, over real storage and the sandbox provider over real
 * HTTP: a person sends a photo and a document from the sandbox phone; the tenant downloads them
 * (the bytes match, the headers are right, neither the provider's URL nor its token reach a
 * response or a log line); a medium the provider forgot is 410; another portal's id is 404; a
 * medium over the cap is 422 and bytes that do not match the webhook's SHA-256 are 502, both
 * without a byte of the medium sent.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import {
  attachmentHeader,
  contentTypeOf,
  safeFileName,
} from '../../src/messaging/media/media-files.ts';
import { createPortal } from '../helpers/app.ts';
import { personWrites } from '../helpers/inbound.ts';
import { eventually } from '../helpers/instances.ts';
import { messagingSetup, type MessagingSetup } from '../helpers/messaging.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';

const MEDIA = '/api/v1/external/messaging/media';
/** The person the sandbox connects as (its default user): whose tokens the tests look for. */
const SANDBOX_USER = '100012345678';

const get = (s: MessagingSetup, id: string, token = s.token) =>
  s.app.inject({ url: `${MEDIA}/${id}`, headers: { authorization: token } });

/** Nothing of the provider's token or download URL in `text`. */
function assertNoProviderSecrets(s: MessagingSetup, text: string): void {
  const tokens = s.provider.sandbox.tokensOf(s.provider.appId, SANDBOX_USER);
  assert.ok(tokens.length > 0, 'the sandbox issued the portal a token');
  for (const token of tokens) assert.ok(!text.includes(token), 'no provider token');
  assert.doesNotMatch(text, /whatsapp_business\/attachments|[?&]hash=/, 'no download URL');
}

for (const backend of backends()) {
  describe(`inbound media downloads (${backend.name})`, () => {
    test('a photo and a document: the bytes, their headers, nothing of the provider', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const photo = await personWrites(s, '16505550101', {
        type: 'image',
        image: { caption: 'the broken part' },
      });
      assert.match(photo.mediaId!, /^med_/);
      const res = await get(s, photo.mediaId!);
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(res.rawPayload.equals(photo.bytes!), 'the bytes the person sent');
      assert.equal(res.headers['content-type'], 'image/jpeg');
      assert.equal(res.headers['content-length'], String(photo.bytes!.length));
      assert.equal(res.headers['content-disposition'], `attachment; filename=${photo.mediaId}.jpg`);
      assert.equal(res.headers['cache-control'], 'private, no-store');
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      // The size, learned from the download, is kept.
      const [row] = await queryRows<{ file_size: number }>(
        s.services.storage,
        sql`select file_size from media where id = ${photo.mediaId}`,
      );
      assert.equal(Number(row!.file_size), photo.bytes!.length);

      const doc = await personWrites(s, '16505550101', {
        type: 'document',
        document: { caption: 'invoice' },
      });
      const pdf = await get(s, doc.mediaId!);
      assert.equal(pdf.statusCode, 200, pdf.body);
      assert.ok(pdf.rawPayload.equals(doc.bytes!));
      assert.equal(pdf.headers['content-type'], 'application/pdf');
      // The document's own name (sealed in the message's content), as the person's phone gave it.
      assert.equal(pdf.headers['content-disposition'], 'attachment; filename=sandbox-invoice.pdf');
      const named = await personWrites(s, '16505550101', {
        type: 'document',
        document: { filename: '../../Ré\u202Esumé "final".pdf' },
      });
      const renamed = await get(s, named.mediaId!);
      assert.equal(renamed.statusCode, 200, renamed.body);
      assert.equal(
        renamed.headers['content-disposition'],
        `attachment; filename="R?_sum? _final_.pdf"; filename*=UTF-8''R%C3%A9_sum%C3%A9%20_final_.pdf`,
      );

      for (const r of [res, pdf]) assertNoProviderSecrets(s, JSON.stringify(r.headers));
      assertNoProviderSecrets(s, s.logs.join('\n'));
    });

    test('gone at the provider → 410 media_gone; another portal’s id or an unknown one → 404', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const photo = await personWrites(s, '16505550102', { type: 'image', image: {} });
      const other = await createPortal(s.services);
      const foreign = await get(s, photo.mediaId!, other.token);
      assert.equal(foreign.statusCode, 404);
      assert.equal(foreign.json().error.code, 'not_found');
      assert.equal((await get(s, 'med_nothing')).statusCode, 404);

      assert.ok(s.provider.sandbox.cloud.deleteMedium(photo.providerMediaId!));
      const gone = await get(s, photo.mediaId!);
      assert.equal(gone.statusCode, 410, gone.body);
      assert.equal(gone.json().error.code, 'media_gone');
      assertNoProviderSecrets(s, gone.body + s.logs.join('\n'));
    });

    test('over MESSAGING_MEDIA_MAX_BYTES → 422 media_too_large, nothing of it sent', async (t) => {
      const s = await messagingSetup(t, backend, {
        workers: false,
        env: { MESSAGING_MEDIA_MAX_BYTES: '100' },
      });
      const photo = await personWrites(s, '16505550103', { type: 'image', image: {} });
      assert.ok(photo.bytes!.length > 100);
      const res = await get(s, photo.mediaId!);
      assert.equal(res.statusCode, 422, res.body);
      assert.equal(res.json().error.code, 'media_too_large');
      assert.match(res.headers['content-type'] as string, /^application\/json/);
    });

    test('one provider media id in two messages: each keeps its medium and caption, both download', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const from = '16505550177';
      const first = await s.provider.sandbox.cloud.writeIn({
        phoneNumberId: s.numbers[0]!,
        from,
        message: { type: 'image', image: { caption: 'the first' } },
      });
      assert.ok(first.ok, JSON.stringify(first));
      const stored = () =>
        queryRows<{ id: string; media_id: string | null; provider_media_id: string | null }>(
          s.services.storage,
          sql`select i.id, i.media_id, m.provider_media_id from messages i
              left join media m on m.id = i.media_id and m.portal_id = i.portal_id
              where i.portal_id = ${s.portalId} and i.direction = 'inbound'
              order by i.stored_at, i.id`,
        );
      await eventually(async () => (await stored()).length === 1, 'the first message is stored');
      const providerMediaId = (await stored())[0]!.provider_media_id!;
      // The same medium again, by its id (a client's "send this media id" or a forward).
      const second = await s.provider.sandbox.cloud.writeIn({
        phoneNumberId: s.numbers[0]!,
        from,
        message: { type: 'image', image: { id: providerMediaId, caption: 'the second' } },
      });
      assert.ok(second.ok, JSON.stringify(second));
      await eventually(async () => (await stored()).length === 2, 'the second message is stored');
      const rows = await stored();
      assert.equal(rows[1]!.provider_media_id, providerMediaId, 'the second has its medium row');
      assert.notEqual(rows[0]!.media_id, rows[1]!.media_id);
      const list = await s.app.inject({
        url: '/api/v1/external/messaging/messages?direction=inbound',
        headers: { authorization: s.token },
      });
      const media = (
        list.json().data.items as { id: string; media?: { id: string; caption: string } }[]
      )
        .map((m) => ({ id: m.id, media: m.media?.id, caption: m.media?.caption }))
        .sort((a, b) => (a.caption ?? '').localeCompare(b.caption ?? ''));
      assert.deepEqual(media, [
        { id: rows[0]!.id, media: rows[0]!.media_id, caption: 'the first' },
        { id: rows[1]!.id, media: rows[1]!.media_id, caption: 'the second' },
      ]);
      for (const row of rows) {
        const res = await get(s, row.media_id!);
        assert.equal(res.statusCode, 200, res.body);
      }
    });

    test('bytes that do not match the webhook’s SHA-256 → 502, not the bytes', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const photo = await personWrites(s, '16505550104', { type: 'image', image: {} });
      await queryRows(
        s.services.storage,
        sql`update media set sha256 = ${'0'.repeat(64)} where id = ${photo.mediaId}`,
      );
      const res = await get(s, photo.mediaId!);
      assert.equal(res.statusCode, 502, res.body);
      assert.equal(res.json().error.code, 'media_checksum_mismatch');
      assert.ok(!res.rawPayload.includes(photo.bytes!.subarray(0, 64)));
    });
  });
}

describe('the offered file name', () => {
  test('a person’s name reduced to one harmless segment; else the id and an extension', () => {
    const id = 'med_abc';
    assert.equal(safeFileName('invoice 42.pdf', id, 'application/pdf'), 'invoice 42.pdf');
    assert.equal(safeFileName('../../etc/passwd', id, 'text/plain'), 'passwd');
    assert.equal(safeFileName('C:\\Users\\x\\report.docx', id, 'text/plain'), 'report.docx');
    assert.equal(safeFileName('a\u202Egnp.exe', id, 'image/png'), 'a_gnp.exe');
    assert.equal(safeFileName('line\r\nbreak.txt', id, 'text/plain'), 'line__break.txt');
    assert.equal(safeFileName('...', id, 'image/png'), 'med_abc.png');
    assert.equal(safeFileName(undefined, id, 'audio/ogg; codecs=opus'), 'med_abc.ogg');
    assert.equal(safeFileName(undefined, id, 'application/x-unknown'), 'med_abc.bin');
    const long = safeFileName(`${'é'.repeat(300)}.pdf`, id, 'application/pdf');
    assert.equal([...long].length, 150);
    assert.ok(long.endsWith('.pdf'));
    // The header: ASCII fallback plus the UTF-8 name (RFC 6266 / 8187), never a raw quote.
    assert.equal(
      attachmentHeader('résumé "final".pdf'),
      `attachment; filename="r?sum? \\"final\\".pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22.pdf`,
    );
    assert.equal(contentTypeOf('image/jpeg'), 'image/jpeg');
    assert.equal(contentTypeOf('text/html\r\nX-Evil: 1'), 'application/octet-stream');
  });
});
