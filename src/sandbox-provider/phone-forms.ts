/**
 * The sandbox phone page's forms (phone-page.tsx), each answering with the phone page again and
 * what happened on top (HTTP 404 for an unknown number, 400 for bad input, which changes
 * nothing):
 *
 * - `POST /sandbox/phone/reply`    form `phone_number_id`, `from`, `text`, `name?`,
 *   `context_id?` (the wamid of the message it quotes) → a text message; or, for a person who
 *   writes with a WhatsApp username and no visible number, `username` instead of `from` (their
 *   BSUID derived from it; the webhook carries no phone).
 *
 * In every form `from` is the person's number (digits), or the BSUID of a username person (the
 * key of their thread on the page): they then write without a phone.
 * - `POST /sandbox/phone/react`    form `phone_number_id`, `from`, `message_id`, `emoji` (empty
 *   removes the reaction) → a reaction.
 * - `POST /sandbox/phone/interactive` form `phone_number_id`, `from`, `message_id` (the wamid of
 *   a business message to this person), `reply_id` (a reply button's or a list row's id, or
 *   `quick_reply:<index>` of a template's button) → the interactive reply (interactive-replies.ts)
 *   with `context.id` = that wamid; 400 for a button or row the message does not have.
 * - `POST /sandbox/phone/location` form `phone_number_id`, `from`, `latitude`, `longitude`,
 *   `name?`, `address?` → a location.
 * - `POST /sandbox/phone/media`    multipart `phone_number_id`, `from`, `sample`, `caption?`,
 *   `file?` (up to 1 MB: an uploaded JPEG or PNG is sent as an image, anything else as a
 *   document; without a file the chosen sample is sent as its type) → a medium.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/payload-examples
 */
import fastifyMultipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type, type Static } from 'typebox';
import { writeIn, type InboundInput } from './cloud-inbound.ts';
import { findMessage, type InboundMessage, type Upload } from './inbound-message.ts';
import { tappedReply } from './interactive-replies.ts';
import { sampleByKey } from './samples/samples.ts';
import { BSUID_PATTERN, isBsuid } from './sandbox-people.ts';
import { failureStatus, outcomeLines, phoneHtml } from './phone-page.tsx';
import { HtmlResponse, type SurfaceOptions } from './surface.ts';

/** The largest file a person may upload from the phone page. */
const UPLOAD_MAX_BYTES = 1024 * 1024;

const PHONE = '^[1-9][0-9]{6,14}$';
/** The person: a number, or a username person's BSUID. */
const From = Type.Union([Type.String({ pattern: PHONE }), Type.String({ pattern: BSUID_PATTERN })]);
const Who = {
  phone_number_id: Type.String({ pattern: '^[0-9]{1,30}$' }),
  from: From,
};
/** The `InboundInput` person of a form's `from`: a number, or a BSUID without one. */
const person = (from: string) => (isBsuid(from) ? { userId: from } : { from });
const ReplyForm = Type.Object({
  phone_number_id: Who.phone_number_id,
  from: Type.Optional(From),
  username: Type.Optional(Type.String({ pattern: '^[a-z0-9._]{3,35}$' })),
  text: Type.String({ minLength: 1, maxLength: 4096 }),
  name: Type.Optional(Type.String({ maxLength: 100 })),
  context_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
});
const ReactForm = Type.Object({
  ...Who,
  message_id: Type.String({ minLength: 1, maxLength: 200 }),
  emoji: Type.String({ maxLength: 16 }),
});
const TapForm = Type.Object({
  ...Who,
  message_id: Type.String({ minLength: 1, maxLength: 200 }),
  reply_id: Type.String({ minLength: 1, maxLength: 256 }),
});
const Coordinate = Type.String({ pattern: '^-?[0-9]{1,3}(\\.[0-9]{1,10})?$' });
const LocationForm = Type.Object({
  ...Who,
  latitude: Coordinate,
  longitude: Coordinate,
  name: Type.Optional(Type.String({ maxLength: 200 })),
  address: Type.Optional(Type.String({ maxLength: 500 })),
});
/** The media form's fields (checked in the handler: multipart bodies have no schema here). */
type MediaFields = { phone_number_id?: string; from?: string; sample?: string; caption?: string };
const IMAGE_UPLOADS = new Set(['image/jpeg', 'image/png']);
const MIME = /^[a-z]+\/[a-zA-Z0-9.+-]+$/;

/** The form routes (a plugin of their own: multipart is parsed here only). */
export async function phoneFormRoutes(
  app: FastifyInstance,
  { state }: SurfaceOptions,
): Promise<void> {
  await app.register(fastifyMultipart, {
    limits: { fileSize: UPLOAD_MAX_BYTES, files: 1, fields: 6, fieldSize: 2000, parts: 8 },
  });
  const html = (reply: FastifyReply, status: number, lines: string[]) =>
    reply.code(status).type('text/html; charset=utf-8').send(phoneHtml(state, lines));
  app.setErrorHandler((err: { statusCode?: number; message?: string }, _request, reply) =>
    html(reply, err.statusCode === 413 ? 413 : 400, [
      err.statusCode === 413 ? 'The file is larger than 1 MB.' : 'Check the form and try again.',
    ]),
  );
  /** Write in as the person and answer with the phone page. */
  const send = async (reply: FastifyReply, input: InboundInput) => {
    const outcome = await writeIn(state, input);
    return html(reply, outcome.ok ? 200 : failureStatus(outcome.reason), outcomeLines(outcome));
  };
  const schema = <T>(body: T) => ({ schema: { body, response: HtmlResponse } });

  app.post('/sandbox/phone/reply', schema(ReplyForm), async (request, reply) => {
    const form = request.body as Static<typeof ReplyForm>;
    if (form.from === undefined && form.username === undefined)
      return html(reply, 400, ['Give your number or your username.']);
    return send(reply, {
      phoneNumberId: form.phone_number_id,
      ...(form.from !== undefined && person(form.from)),
      ...(form.username !== undefined && { username: form.username }),
      message: {
        type: 'text',
        text: { body: form.text },
        ...(form.context_id && { context: { id: form.context_id } }),
      },
      ...(form.name && { name: form.name }),
    });
  });

  app.post('/sandbox/phone/react', schema(ReactForm), async (request, reply) => {
    const form = request.body as Static<typeof ReactForm>;
    return send(reply, {
      phoneNumberId: form.phone_number_id,
      ...person(form.from),
      message: { type: 'reaction', reaction: { message_id: form.message_id, emoji: form.emoji } },
    });
  });

  app.post('/sandbox/phone/interactive', schema(TapForm), async (request, reply) => {
    const form = request.body as Static<typeof TapForm>;
    const m = findMessage(state, form.message_id);
    const mine = m?.direction === 'received' && m.waId === form.from;
    const message =
      mine && m.phoneNumberId === form.phone_number_id && tappedReply(m, form.reply_id);
    if (!message) return html(reply, 400, ['No such button or row on that message.']);
    return send(reply, { phoneNumberId: form.phone_number_id, ...person(form.from), message });
  });

  app.post('/sandbox/phone/location', schema(LocationForm), async (request, reply) => {
    const form = request.body as Static<typeof LocationForm>;
    const [latitude, longitude] = [Number(form.latitude), Number(form.longitude)];
    if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180)
      return html(reply, 400, ['Latitude is -90 to 90, longitude -180 to 180.']);
    return send(reply, {
      phoneNumberId: form.phone_number_id,
      ...person(form.from),
      message: {
        type: 'location',
        location: {
          latitude,
          longitude,
          ...(form.name && { name: form.name }),
          ...(form.address && { address: form.address }),
        },
      },
    });
  });

  app.post('/sandbox/phone/media', async (request, reply) => {
    if (!request.isMultipart()) return html(reply, 400, ['Send the form as multipart.']);
    const fields: Record<string, string> = {};
    let upload: Upload | undefined;
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        const bytes = await part.toBuffer();
        if (bytes.length > 0)
          upload = {
            bytes,
            mimeType: MIME.test(part.mimetype) ? part.mimetype : 'application/octet-stream',
            filename: part.filename.slice(0, 240) || 'file',
          };
      } else if (typeof part.value === 'string') fields[part.fieldname] = part.value;
    }
    const form: MediaFields = fields;
    const sample = sampleByKey(form.sample ?? '');
    const { phone_number_id: phoneNumberId = '', from = '' } = form;
    const who =
      /^[0-9]{1,30}$/.test(phoneNumberId) && (new RegExp(PHONE).test(from) || isBsuid(from));
    if (!who || (!upload && !sample) || (form.caption ?? '').length > 1024)
      return html(reply, 400, ['Check the form and try again.']);
    const type = upload
      ? IMAGE_UPLOADS.has(upload.mimeType)
        ? 'image'
        : 'document'
      : sample!.type;
    const caption = form.caption ? { caption: form.caption } : {};
    const content = type === 'image' || type === 'video' || type === 'document' ? caption : {};
    return send(reply, {
      phoneNumberId,
      ...person(from),
      message: { type, [type]: content } as InboundMessage,
      media: upload ? { upload } : { sampleKey: sample!.key },
    });
  });
}
