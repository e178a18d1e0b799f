/**
 * Media for the tests: files of known types made in memory, and an upload through
 * `POST /messaging/media` over HTTP to the listening app.
 */
import type { AddressInfo } from 'node:net';
import type { MessagingSetup } from './messaging.ts';

export const UPLOAD = '/api/v1/external/messaging/media';

/** A minimal valid PDF (header, one empty page object, trailer). */
export const PDF = Buffer.from(
  '%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n' +
    '2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n' +
    'trailer\n<< /Root 1 0 R >>\n%%EOF\n',
);

/** A PNG of `size` bytes: the signature, an IHDR chunk, and one IDAT chunk of zeros. */
export function png(size: number): Buffer {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const ihdr = Buffer.alloc(25);
  ihdr.writeUInt32BE(13, 0);
  ihdr.write('IHDR', 4, 'latin1');
  ihdr.writeUInt32BE(1, 8); // width
  ihdr.writeUInt32BE(1, 12); // height
  ihdr[16] = 8; // bit depth
  ihdr[17] = 2; // colour type: RGB
  const idat = Buffer.alloc(size - signature.length - ihdr.length);
  idat.writeUInt32BE(idat.length - 12, 0);
  idat.write('IDAT', 4, 'latin1');
  return Buffer.concat([signature, ihdr, idat]);
}

export interface Upload {
  status: number;
  body: {
    success: boolean;
    data?: { id: string; mimeType: string; size: number; expiresAt: string };
    error?: { code: string; message: string; details?: { field: string }[] };
  };
}

/** POST the form over HTTP to the listening app. */
export async function upload(
  s: MessagingSetup,
  fields: { file?: { bytes: Buffer; name: string; type?: string }; phoneNumberId?: string },
): Promise<Upload> {
  const form = new FormData();
  if (fields.phoneNumberId !== undefined) form.set('phoneNumberId', fields.phoneNumberId);
  if (fields.file)
    form.set(
      'file',
      new Blob([new Uint8Array(fields.file.bytes)], {
        type: fields.file.type ?? 'application/octet-stream',
      }),
      fields.file.name,
    );
  const { port } = s.app.server.address() as AddressInfo;

  const res = await fetch(`http://127.0.0.1:${port}${UPLOAD}`, {
    method: 'POST',
    headers: { authorization: s.token },
    body: form,
  });
  return { status: res.status, body: (await res.json()) as Upload['body'] };
}
