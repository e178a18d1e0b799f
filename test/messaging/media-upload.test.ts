/**
 * `POST /messaging/media` end to end, over real storage, the app listening on a port (the upload
 * is a real multipart stream) and the sandbox provider over real HTTP: a PDF is uploaded, gets a
 * `med_` id, the sandbox holds its bytes (its `GET /{media-id}` and download serve them) and
 * `findSendableMedium` finds it (not for another portal, not once expired); a 20 MB image is
 * refused naming the 5 MB limit; a `.pdf` that is an ELF executable is 415; plain text is a
 * document; no file is 400; several numbers need `phoneNumberId`; the sandbox's refusal is 502.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { classify, limitOf } from '../../src/messaging/media/media-kinds.ts';
import { findSendableMedium } from '../../src/messaging/media/outbound-media.ts';
import { loadKeyring } from '../../src/platform/keyring.ts';
import { createPortal } from '../helpers/app.ts';
import { PDF, png, upload, UPLOAD } from '../helpers/media.ts';
import { messagingSetup, type MessagingSetup } from '../helpers/messaging.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';

const SANDBOX_USER = '100012345678';

/** An ELF executable's header (64-bit, little-endian, x86-64) and some code-like bytes. */
function elf(): Buffer {
  const bytes = Buffer.alloc(4096, 0x90);
  Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]).copy(bytes, 0);
  bytes.fill(0, 8, 16);
  bytes.writeUInt16LE(2, 16); // ET_EXEC
  bytes.writeUInt16LE(0x3e, 18); // x86-64
  return bytes;
}

/** A WebP of `size` bytes with an extended header (`VP8X`), its animation flag as asked. */
function webp(size: number, animated: boolean): Buffer {
  const bytes = Buffer.alloc(size);
  bytes.write('RIFF', 0, 'latin1');
  bytes.writeUInt32LE(size - 8, 4);
  bytes.write('WEBPVP8X', 8, 'latin1');
  bytes.writeUInt32LE(10, 16);
  bytes[20] = animated ? 0x02 : 0x00;
  return bytes;
}

/** The bytes the sandbox serves for its media id, through `GET /{media-id}` and the download. */
async function sandboxBytes(s: MessagingSetup, providerMediaId: string): Promise<Buffer> {
  const [token] = s.provider.sandbox.tokensOf(s.provider.appId, SANDBOX_USER);
  const headers = { authorization: `Bearer ${token}` };
  const info = await fetch(`${s.provider.sandbox.url}/v21.0/${providerMediaId}`, { headers });
  assert.equal(info.status, 200);
  const { url, mime_type: mimeType } = (await info.json()) as { url: string; mime_type: string };
  assert.equal(mimeType, 'application/pdf');
  const download = await fetch(url, { headers });
  assert.equal(download.status, 200);
  return Buffer.from(await download.arrayBuffer());
}

for (const backend of backends()) {
  describe(`media upload (${backend.name})`, () => {
    test('a PDF: a med_ id, the bytes at the sandbox, sendable for 30 days', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const res = await upload(s, {
        file: { bytes: PDF, name: 'invoice 42.pdf', type: 'application/pdf' },
        phoneNumberId: s.numbers[0]!,
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const data = res.body.data!;
      assert.match(data.id, /^med_[0-9A-Za-z]+$/);
      assert.equal(data.mimeType, 'application/pdf');
      assert.equal(data.size, PDF.length);
      const days = (Date.parse(data.expiresAt) - Date.now()) / 86_400_000;
      assert.ok(days > 29.9 && days <= 30, `expires in 30 days (${days})`);

      const medium = await findSendableMedium(
        s.services.storage.db,
        s.portalId,
        data.id,
        loadKeyring(s.config),
      );
      assert.ok(medium);
      assert.equal(medium.kind, 'document');
      assert.equal(medium.fileName, 'invoice 42.pdf');
      assert.equal(medium.phoneNumberId, s.numbers[0]);
      assert.equal(medium.size, PDF.length);
      assert.ok((await sandboxBytes(s, medium.providerMediaId)).equals(PDF));
      // The file name is sealed at rest.
      const dump = await queryRows<{ row: string }>(
        s.services.storage,
        sql`select row_to_json(media)::text as row from media where id = ${data.id}`,
      );
      assert.doesNotMatch(dump[0]!.row, /invoice 42/);

      const other = await createPortal(s.services);
      const otherId = await s.services.accounts.portalIdFor(other.portalCode);
      assert.equal(await findSendableMedium(s.services.storage.db, otherId, data.id), null);
      assert.equal(await findSendableMedium(s.services.storage.db, s.portalId, 'med_x'), null);
      await queryRows(
        s.services.storage,
        sql`update media set expires_at = now() - interval '1 second' where id = ${data.id}`,
      );
      assert.equal(await findSendableMedium(s.services.storage.db, s.portalId, data.id), null);
    });

    test('a 20 MB image is refused naming 5 MB; an executable named .pdf is 415', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      // Every upload's temporary file is gone when its answer is sent, refusals included.
      const uploads = await mkdtemp(join(tmpdir(), 'media-upload-test-'));
      const previous = process.env.TMPDIR;
      process.env.TMPDIR = uploads;
      t.after(async () => {
        if (previous === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = previous;
        await rm(uploads, { recursive: true, force: true });
      });
      const from = s.numbers[0]!;
      const big = await upload(s, {
        file: { bytes: png(20_000_000), name: 'photo.png', type: 'image/png' },
        phoneNumberId: from,
      });
      assert.equal(big.status, 422, JSON.stringify(big.body));
      assert.equal(big.body.error!.code, 'media_too_large');
      assert.match(big.body.error!.message, /images are limited to 5 MB/);
      const small = await upload(s, {
        file: { bytes: png(4096), name: 'photo.png' },
        phoneNumberId: from,
      });
      assert.equal(small.status, 201, JSON.stringify(small.body));
      assert.equal(small.body.data!.mimeType, 'image/png');

      const exe = await upload(s, {
        file: { bytes: elf(), name: 'invoice.pdf', type: 'application/pdf' },
        phoneNumberId: from,
      });
      assert.equal(exe.status, 415, JSON.stringify(exe.body));
      assert.equal(exe.body.error!.code, 'unsupported_media_type');
      const windows = Buffer.concat([Buffer.from('MZ'), Buffer.alloc(200, 0x00)]);
      windows.write('PE\0\0', 128, 'latin1');
      windows.writeUInt32LE(128, 0x3c);
      const pe = await upload(s, { file: { bytes: windows, name: 'a.pdf' }, phoneNumberId: from });
      assert.equal(pe.status, 415, JSON.stringify(pe.body));

      const text = await upload(s, {
        file: { bytes: Buffer.from('Order 42: two boxes.\nThank you!\n'), name: 'note.pdf' },
        phoneNumberId: from,
      });
      assert.equal(text.status, 201, JSON.stringify(text.body));
      assert.equal(text.body.data!.mimeType, 'text/plain');
      const binary = await upload(s, {
        file: { bytes: Buffer.from([1, 2, 3, 0, 255, 254, 7]), name: 'x.txt' },
        phoneNumberId: from,
      });
      assert.equal(binary.status, 415);
      const rows = await queryRows<{ n: number }>(
        s.services.storage,
        sql`select count(*)::int as n from media where portal_id = ${s.portalId}`,
      );
      assert.equal(Number(rows[0]!.n), 2, 'only the accepted uploads are recorded');
      assert.deepEqual(await readdir(uploads), [], 'no temporary file left');
    });

    test('a static sticker over 100 KB is refused naming 100 KB', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const res = await upload(s, {
        file: { bytes: webp(200_000, false), name: 's.webp' },
        phoneNumberId: s.numbers[0]!,
      });
      assert.equal(res.status, 422, JSON.stringify(res.body));
      assert.match(res.body.error!.message, /static stickers are limited to 100 KB/);
      const animated = await upload(s, {
        file: { bytes: webp(200_000, true), name: 's.webp' },
        phoneNumberId: s.numbers[0]!,
      });
      assert.equal(animated.status, 201, JSON.stringify(animated.body));
      assert.equal(animated.body.data!.mimeType, 'image/webp');
    });

    test('no file → 400; several numbers need phoneNumberId; a foreign number → 400', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      assert.ok(s.numbers.length > 1, 'the sandbox account has several numbers');
      const none = await upload(s, { phoneNumberId: s.numbers[0]! });
      assert.equal(none.status, 400);
      assert.equal(none.body.error!.code, 'invalid_request');
      assert.equal(none.body.error!.details![0]!.field, 'body.file');

      const unnamed = await upload(s, { file: { bytes: PDF, name: 'a.pdf' } });
      assert.equal(unnamed.status, 400, JSON.stringify(unnamed.body));
      assert.equal(unnamed.body.error!.details![0]!.field, 'body.phoneNumberId');
      assert.match(unnamed.body.error!.message, /several phone numbers/);
      const foreign = await upload(s, { file: { bytes: PDF, name: 'a.pdf' }, phoneNumberId: '1' });
      assert.equal(foreign.status, 400);
      assert.equal(foreign.body.error!.details![0]!.field, 'body.phoneNumberId');
    });

    test('a multipart body without boundary, with another one, truncated or garbage → 400', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const form = new FormData();
      form.set('phoneNumberId', s.numbers[0]!);
      form.set('file', new Blob([new Uint8Array(PDF)], { type: 'application/pdf' }), 'a.pdf');
      const encoded = new Request('http://localhost/', { method: 'POST', body: form });
      const type = encoded.headers.get('content-type')!;
      const whole = Buffer.from(await encoded.arrayBuffer());
      const cases: [string, string, Buffer][] = [
        ['no boundary', 'multipart/form-data', whole],
        ['another boundary', 'multipart/form-data; boundary=not-the-one', whole],
        ['truncated', type, whole.subarray(0, Math.floor(whole.length / 2))],
        ['headers only', type, whole.subarray(0, whole.indexOf('\r\n\r\n') + 2)],
        ['garbage', type, Buffer.from('\u0000\u00ff garbage \r\n--\r\n\r\n', 'latin1')],
        ['empty', type, Buffer.alloc(0)],
      ];
      const before = s.logs.length;
      for (const [name, contentType, payload] of cases) {
        const res = await s.app.inject({
          method: 'POST',
          url: UPLOAD,
          headers: { authorization: s.token, 'content-type': contentType },
          payload,
        });
        assert.equal(res.statusCode, 400, `${name}: ${res.body}`);
        assert.equal(res.json().error.code, 'invalid_request', name);
      }
      const errors = s.logs
        .slice(before)
        .filter((l) => (JSON.parse(l) as { level: number }).level >= 50);
      assert.deepEqual(errors, [], 'no error logged');
      const [row] = await queryRows<{ n: number }>(
        s.services.storage,
        sql`select count(*)::int as n from media where portal_id = ${s.portalId}`,
      );
      assert.equal(Number(row!.n), 0);
    });

    test('the sandbox refuses the upload → 502 provider_error, nothing recorded', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const res = await upload(s, {
        file: { bytes: PDF, name: 'sandbox-refuse.pdf' },
        phoneNumberId: s.numbers[1]!,
      });
      assert.equal(res.status, 502, JSON.stringify(res.body));
      assert.equal(res.body.error!.code, 'provider_error');
      assert.match(res.body.error!.message, /131053/);
      const rows = await queryRows<{ n: number }>(
        s.services.storage,
        sql`select count(*)::int as n from media`,
      );
      assert.equal(Number(rows[0]!.n), 0);

      // The sandbox answers Graph's error object for what it refuses.
      const [token] = s.provider.sandbox.tokensOf(s.provider.appId, SANDBOX_USER);
      const graph = async (fields: Record<string, string>, bearer = `Bearer ${token}`) => {
        const form = new FormData();
        for (const [k, v] of Object.entries(fields)) form.set(k, v);
        form.set('file', new Blob([new Uint8Array(PDF)]), 'a.pdf');
        const res = await fetch(`${s.provider.sandbox.url}/v21.0/${s.numbers[0]}/media`, {
          method: 'POST',
          headers: { authorization: bearer },
          body: form,
        });
        const body = (await res.json()) as { error: { code: number; fbtrace_id: string } };
        return { status: res.status, code: body.error.code, trace: body.error.fbtrace_id };
      };
      const noProduct = await graph({ type: 'application/pdf' });
      assert.deepEqual([noProduct.status, noProduct.code], [400, 100]);
      assert.ok(noProduct.trace);
      const badType = await graph({ messaging_product: 'whatsapp', type: 'application/x-elf' });
      assert.deepEqual([badType.status, badType.code], [400, 100]);
      const noToken = await graph({ messaging_product: 'whatsapp' }, 'Bearer nope');
      assert.deepEqual([noToken.status, noToken.code], [401, 190]);
    });
  });
}

describe('the Cloud API table', () => {
  test('types by content; Office containers by extension; Ogg only with Opus', () => {
    assert.deepEqual(classify('application/pdf', 'x.exe', false), {
      ok: true,
      mimeType: 'application/pdf',
      kind: 'document',
    });
    assert.deepEqual(classify('application/x-cfb', 'budget.XLS', false), {
      ok: true,
      mimeType: 'application/vnd.ms-excel',
      kind: 'document',
    });
    assert.equal(classify('application/x-cfb', 'budget.msi', false).ok, false);
    assert.deepEqual(classify('audio/ogg; codecs=opus', 'a', false), {
      ok: true,
      mimeType: 'audio/ogg',
      kind: 'audio',
    });
    assert.equal(classify('audio/ogg', 'a.ogg', false).ok, false);
    assert.equal(classify('application/x-elf', 'a.pdf', true).ok, false);
    assert.equal(classify('image/gif', 'a.png', false).ok, false);
    assert.deepEqual(classify(undefined, 'a.bin', true), {
      ok: true,
      mimeType: 'text/plain',
      kind: 'document',
    });
    assert.equal(classify(undefined, 'a.txt', false).ok, false);
    assert.equal(limitOf('image', Buffer.alloc(0)).bytes, 5_000_000);
    assert.equal(limitOf('document', Buffer.alloc(0)).bytes, 100_000_000);
  });
});
