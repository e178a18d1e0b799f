/**
 * One inbound message of the `messages` webhook field, read into `InboundContent`: a pure
 * function over the message object (already checked for `id`, `from`, `timestamp` and `type`).
 * TypeBox schemas check only the fields Portico reads and allow every other one (the provider
 * adds fields without notice). A type Portico does not read (`order`, `system`,
 * `request_welcome`, the provider's own `unsupported`, anything new), or a known type whose
 * object does not fit, becomes `unsupported` with the provider's type and error codes: an odd
 * message is kept, never dropped and never fatal to its batch.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/components#messages-object
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/image
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/audio
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/text
 *   (the `referral` of a message sent from a click-to-WhatsApp ad)
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/unsupported
 */
import { Type, type Static, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { providerErrorTitle } from '../provider-error.ts';
import {
  INBOUND_MEDIA_TYPES,
  type InboundContent,
  type InboundMediaType,
  type InboundMessageEvent,
  type InboundReferral,
  type SharedContact,
} from './provider-webhook-events.ts';

const Str = (maxLength: number, minLength = 0) => Type.String({ minLength, maxLength });
const Opt = Type.Optional;
/** A caption, a body, a title: bounded so one message cannot carry megabytes into a row. */
const TEXT_MAX = 65_536;
const SHORT = 1024;

const Text = Type.Object({ body: Str(TEXT_MAX) });
const Media = Type.Object({
  id: Str(256, 1),
  mime_type: Str(256, 1),
  sha256: Opt(Str(128)),
  caption: Opt(Str(TEXT_MAX)),
  filename: Opt(Str(SHORT)),
  animated: Opt(Type.Boolean()),
  voice: Opt(Type.Boolean()),
});
const Location = Type.Object({
  latitude: Type.Number({ minimum: -90, maximum: 90 }),
  longitude: Type.Number({ minimum: -180, maximum: 180 }),
  name: Opt(Str(SHORT)),
  address: Opt(Str(SHORT)),
  url: Opt(Str(2048)),
});
const SharedContactWire = Type.Object({
  name: Type.Object({
    formatted_name: Str(SHORT),
    first_name: Opt(Str(SHORT)),
    last_name: Opt(Str(SHORT)),
  }),
  phones: Opt(
    Type.Array(Type.Object({ phone: Opt(Str(64)), wa_id: Opt(Str(64)), type: Opt(Str(64)) }), {
      maxItems: 50,
    }),
  ),
  emails: Opt(
    Type.Array(Type.Object({ email: Opt(Str(SHORT)), type: Opt(Str(64)) }), { maxItems: 50 }),
  ),
  org: Opt(
    Type.Object({
      company: Opt(Str(SHORT)),
      department: Opt(Str(SHORT)),
      title: Opt(Str(SHORT)),
    }),
  ),
  urls: Opt(Type.Array(Type.Object({ url: Opt(Str(2048)), type: Opt(Str(64)) }), { maxItems: 50 })),
});
const Contacts = Type.Array(SharedContactWire, { minItems: 1, maxItems: 300 });
const Reply = Type.Object({ id: Str(SHORT), title: Str(SHORT), description: Opt(Str(SHORT)) });
const Interactive = Type.Union([
  Type.Object({ type: Type.Literal('button_reply'), button_reply: Reply }),
  Type.Object({ type: Type.Literal('list_reply'), list_reply: Reply }),
]);
const Button = Type.Object({ payload: Opt(Str(SHORT)), text: Str(SHORT) });
const Reaction = Type.Object({ message_id: Str(256, 1), emoji: Opt(Str(64)) });
const Errors = Type.Array(Type.Object({ code: Type.Integer() }), { maxItems: 20 });
const Context = Type.Object({
  id: Opt(Str(256, 1)),
  from: Opt(Str(64)),
  forwarded: Opt(Type.Boolean()),
  frequently_forwarded: Opt(Type.Boolean()),
});

/** Meta's `unsupported: {type}`: what the person sent that the Cloud API does not carry. */
const UnsupportedWire = Type.Object({ type: Str(64, 1) });
const Url = Str(2048);
const Referral = Type.Object({
  source_url: Opt(Url),
  source_id: Opt(Str(256)),
  source_type: Opt(Str(64)),
  headline: Opt(Str(SHORT)),
  body: Opt(Str(TEXT_MAX)),
  media_type: Opt(Str(64)),
  image_url: Opt(Url),
  video_url: Opt(Url),
  thumbnail_url: Opt(Url),
  ctwa_clid: Opt(Str(SHORT)),
  welcome_message: Opt(Type.Object({ text: Opt(Str(TEXT_MAX)) })),
});

const is = <T extends TSchema>(schema: T, v: unknown): v is Static<T> => Value.Check(schema, v);
/** `T` with its possibly-undefined properties optional instead (exact optional types). */
type Present<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
};
/** `o` without its undefined properties (absent, not `undefined`, in the stored JSON). */
const present = <T extends object>(o: T): Present<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Present<T>;

/**
 * A webhook's SHA-256 as lower-case hex: the Cloud API sends base64 (some senders hex); anything
 * that is not 32 bytes either way is dropped (nothing to check against).
 */
export function sha256Hex(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (/^[0-9a-fA-F]{64}$/.test(value)) return value.toLowerCase();
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) return undefined;
  const bytes = Buffer.from(value, 'base64');
  return bytes.length === 32 ? bytes.toString('hex') : undefined;
}

function unsupported(providerType: string, errors: unknown): InboundContent {
  return {
    type: 'unsupported',
    unsupported: {
      providerType,
      // Our fixed title per code: the provider's title, message and details may quote input.
      errors: is(Errors, errors)
        ? errors.map((e) => ({ code: e.code, title: providerErrorTitle('other', e.code) }))
        : [],
    },
  };
}

function sharedContact(c: Static<typeof SharedContactWire>): SharedContact {
  return present({
    name: present({
      formattedName: c.name.formatted_name,
      firstName: c.name.first_name,
      lastName: c.name.last_name,
    }),
    phones: c.phones?.map((p) => present({ phone: p.phone, waId: p.wa_id, type: p.type })),
    emails: c.emails?.map((e) => present({ email: e.email, type: e.type })),
    org: c.org && present(c.org),
    urls: c.urls?.map((u) => present({ url: u.url, type: u.type })),
  });
}

/** What the message object `m` (of provider type `type`) says; `unsupported` when unread. */
export function parseInboundContent(type: string, m: Record<string, unknown>): InboundContent {
  const body = m[type];
  if (type === 'text' && is(Text, body)) return { type, text: { body: body.body } };
  if ((INBOUND_MEDIA_TYPES as readonly string[]).includes(type) && is(Media, body)) {
    const sha256 = sha256Hex(body.sha256);
    return {
      type: type as InboundMediaType,
      media: present({
        providerMediaId: body.id,
        mimeType: body.mime_type,
        sha256,
        caption: body.caption,
        filename: body.filename,
        animated: body.animated,
        voice: type === 'audio' ? body.voice : undefined,
      }),
    };
  }
  if (type === 'location' && is(Location, body)) return { type, location: present(body) };
  if (type === 'contacts' && is(Contacts, body)) return { type, contacts: body.map(sharedContact) };
  if (type === 'interactive' && is(Interactive, body)) {
    return body.type === 'button_reply'
      ? {
          type,
          interactive: {
            type: 'button_reply',
            buttonReply: { id: body.button_reply.id, title: body.button_reply.title },
          },
        }
      : {
          type,
          interactive: { type: 'list_reply', listReply: present({ ...body.list_reply }) },
        };
  }
  if (type === 'button' && is(Button, body))
    return { type, button: { payload: body.payload ?? '', text: body.text } };
  if (type === 'reaction' && is(Reaction, body))
    return {
      type,
      reaction: { providerMessageId: body.message_id, emoji: body.emoji ?? '' },
    };
  // Meta's own `unsupported` names what the person sent (`edit`, `poll_creation`, …).
  const named =
    type === 'unsupported' && is(UnsupportedWire, m.unsupported) ? m.unsupported.type : type;
  return unsupported(named, m.errors);
}

/** The message's `context` (what it replies to, whether it was forwarded); undefined if none. */
export function parseInboundContext(m: Record<string, unknown>): InboundMessageEvent['context'] {
  const c = m.context;
  if (!is(Context, c)) return undefined;
  // A message forwarded more than five times is also forwarded.
  const frequentlyForwarded = c.frequently_forwarded === true;
  const forwarded = c.forwarded === true || frequentlyForwarded;
  const context = present({
    providerMessageId: c.id,
    from: c.from,
    forwarded: forwarded || undefined,
    frequentlyForwarded: frequentlyForwarded || undefined,
  });
  return Object.keys(context).length === 0 ? undefined : context;
}

/**
 * The message's `referral` (it was sent from a click-to-WhatsApp ad or a post), camelCased;
 * undefined when there is none or it does not fit (the message itself is kept).
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/text
 */
export function parseInboundReferral(m: Record<string, unknown>): InboundReferral | undefined {
  const r = m.referral;
  if (!is(Referral, r)) return undefined;
  const referral = present({
    sourceUrl: r.source_url,
    sourceId: r.source_id,
    sourceType: r.source_type,
    headline: r.headline,
    body: r.body,
    mediaType: r.media_type,
    imageUrl: r.image_url,
    videoUrl: r.video_url,
    thumbnailUrl: r.thumbnail_url,
    ctwaClid: r.ctwa_clid,
    welcomeMessage: r.welcome_message && present(r.welcome_message),
  });
  return Object.keys(referral).length === 0 ? undefined : referral;
}
