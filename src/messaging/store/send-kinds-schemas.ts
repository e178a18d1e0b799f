/**
 * The kinds of `POST /messaging/messages`: one schema per kind (`SendTextMessage`,
 * `SendImageMessage`, …), told apart by `type`, each carrying the Cloud API's object for that
 * kind in camelCase, with `mediaId` (our `med_…` id) where the provider has its media `id` and
 * `messageId` (our `msg_…` id) where it has a wamid. Every length limit of the Cloud API is in
 * the schema, so a refusal is a 400 naming the field; what a schema cannot say (unique ids, ten
 * rows in all, one of `mediaId` and `link`) is checked by send-kinds.ts.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages
 * @see docs/messaging.md "Sending"
 */
import { Type, type Static, type TProperties, type TSchema, type TUnion } from 'typebox';
import { TemplateSendSchema } from '../templates/template-send.ts';

export const TEXT_BODY_MAX = 4096;
export const TEMPLATE_PARAMETERS_MAX = 100;
export const TEMPLATE_PARAMETER_MAX = 1024;
/** A medium's caption (image, video, document), characters. */
export const CAPTION_MAX = 1024;
/** The Cloud API's interactive limits, characters (or items). */
export const INTERACTIVE = {
  headerText: 60,
  bodyText: 1024,
  footerText: 60,
  buttons: 3,
  buttonTitle: 20,
  replyId: 256,
  listButton: 20,
  sections: 10,
  rows: 10,
  sectionTitle: 24,
  rowTitle: 24,
  rowId: 200,
  rowDescription: 72,
  ctaDisplayText: 20,
} as const;

const Text = (maxLength: number, description: string) =>
  Type.String({ minLength: 1, maxLength, description });
const closed = { additionalProperties: false } as const;

const MessageId = (description: string) =>
  Type.String({ pattern: '^msg_[0-9A-Za-z]{1,60}$', description });

const mediaFields = {
  mediaId: Type.Optional(
    Type.String({
      pattern: '^med_[0-9A-Za-z]{1,60}$',
      description: 'Our id of a medium (`med_…`, uploaded or received). Or give `link`.',
    }),
  ),
  link: Type.Optional(
    Type.String({
      pattern: '^https://[^\\s]+$',
      maxLength: 2048,
      description: 'An https URL the provider downloads the medium from. Or give `mediaId`.',
    }),
  ),
};
const Caption = Type.Optional(Text(CAPTION_MAX, `Shown under it, 1–${CAPTION_MAX} characters.`));
const ONE_OF = 'Exactly one of `mediaId` and `link`.';

export const MediaRefSchema = Type.Object(mediaFields, { ...closed, description: ONE_OF });
export const ImageObjectSchema = Type.Object(
  { ...mediaFields, caption: Caption },
  { ...closed, title: 'ImageObject', description: `${ONE_OF} JPEG or PNG, ≤ 5 MB.` },
);
export const VideoObjectSchema = Type.Object(
  { ...mediaFields, caption: Caption },
  { ...closed, title: 'VideoObject', description: `${ONE_OF} MP4 or 3GPP, ≤ 16 MB.` },
);
/** @see https://developers.facebook.com/documentation/business-messaging/whatsapp/messages/audio-messages */
export const AudioObjectSchema = Type.Object(
  {
    ...mediaFields,
    voice: Type.Optional(
      Type.Boolean({
        description:
          'Send it as a voice message (a microphone icon, downloaded at once, transcribed when ' +
          'the person allows): an OGG file with the Opus codec (`audio/ogg; codecs=opus`). ' +
          'Without it, an audio file.',
      }),
    ),
  },
  {
    ...closed,
    title: 'AudioObject',
    description: `${ONE_OF} AAC, AMR, MP3, MP4 audio or OGG (Opus), ≤ 16 MB.`,
  },
);
export const StickerObjectSchema = Type.Object(mediaFields, {
  ...closed,
  title: 'StickerObject',
  description: `${ONE_OF} WebP, ≤ 100 KB (static) or 500 KB (animated).`,
});
export const DocumentObjectSchema = Type.Object(
  {
    ...mediaFields,
    caption: Caption,
    filename: Type.Optional(Text(240, 'The file name shown with it, e.g. `invoice.pdf`.')),
  },
  { ...closed, title: 'DocumentObject', description: `${ONE_OF} Any type, ≤ 100 MB.` },
);
export const TextObjectSchema = Type.Object(
  {
    body: Text(TEXT_BODY_MAX, `The text, 1–${TEXT_BODY_MAX} characters.`),
    previewUrl: Type.Optional(Type.Boolean({ description: 'Show a preview of its first URL.' })),
  },
  { ...closed, title: 'TextObject' },
);
export const LocationObjectSchema = Type.Object(
  {
    latitude: Type.Number({ minimum: -90, maximum: 90, description: 'Degrees.' }),
    longitude: Type.Number({ minimum: -180, maximum: 180, description: 'Degrees.' }),
    name: Type.Optional(Text(1000, 'The place’s name.')),
    address: Type.Optional(Text(1000, 'The place’s address.')),
  },
  { ...closed, title: 'LocationObject' },
);
export const ReactionObjectSchema = Type.Object(
  {
    messageId: MessageId('The message reacted to (`msg_…`, inbound or outbound, same contact).'),
    emoji: Type.String({
      maxLength: 32,
      format: 'emoji',
      description:
        'Exactly one emoji (one grapheme: `👍`, `👍🏽`, `❤️`, `🇬🇧`); the empty string removes ' +
        'the reaction.',
    }),
  },
  { ...closed, title: 'ReactionObject' },
);

/**
 * A union told apart by its `type` (a `oneOf` with a `discriminator`): only the branch `type`
 * names is checked, so a refusal names that branch's field, and OpenAPI says the same.
 */
function discriminated<T extends TSchema[]>(
  branches: [...T],
  options: { description: string; title?: string; examples?: unknown[] },
) {
  return Type.Unsafe<Static<TUnion<T>>>({
    type: 'object',
    oneOf: branches,
    discriminator: { propertyName: 'type' },
    required: ['type'],
    ...options,
  });
}

const header = <K extends string, P extends TProperties>(kind: K, fields: P) =>
  Type.Object({ type: Type.Literal(kind), ...fields }, closed);
const TextHeader = header('text', {
  text: Text(INTERACTIVE.headerText, `1–${INTERACTIVE.headerText} characters.`),
});
const InteractiveHeaderSchema = discriminated(
  [
    TextHeader,
    header('image', { image: MediaRefSchema }),
    header('video', { video: MediaRefSchema }),
    header('document', { document: MediaRefSchema }),
  ],
  { description: 'A text, or an image, video or document (by `mediaId` or `link`).' },
);
const interactiveFields = {
  body: Type.Object(
    { text: Text(INTERACTIVE.bodyText, `1–${INTERACTIVE.bodyText} characters.`) },
    closed,
  ),
  footer: Type.Optional(
    Type.Object(
      { text: Text(INTERACTIVE.footerText, `1–${INTERACTIVE.footerText} characters.`) },
      closed,
    ),
  ),
};
const ReplyButton = Type.Object(
  {
    type: Type.Literal('reply'),
    reply: Type.Object(
      {
        id: Text(INTERACTIVE.replyId, 'Returned in the reply when tapped; unique in the message.'),
        title: Text(INTERACTIVE.buttonTitle, `The label, 1–${INTERACTIVE.buttonTitle} characters.`),
      },
      closed,
    ),
  },
  closed,
);
const ListRow = Type.Object(
  {
    id: Text(INTERACTIVE.rowId, 'Returned in the reply when chosen; unique in the message.'),
    title: Text(INTERACTIVE.rowTitle, `1–${INTERACTIVE.rowTitle} characters.`),
    description: Type.Optional(
      Text(INTERACTIVE.rowDescription, `1–${INTERACTIVE.rowDescription} characters.`),
    ),
  },
  closed,
);
const ListSection = Type.Object(
  {
    title: Type.Optional(
      Text(INTERACTIVE.sectionTitle, 'Required when there are several sections.'),
    ),
    rows: Type.Array(ListRow, { minItems: 1, maxItems: INTERACTIVE.rows }),
  },
  closed,
);

const InteractiveButtonSchema = Type.Object(
  {
    type: Type.Literal('button'),
    header: Type.Optional(InteractiveHeaderSchema),
    ...interactiveFields,
    action: Type.Object(
      {
        buttons: Type.Array(ReplyButton, {
          minItems: 1,
          maxItems: INTERACTIVE.buttons,
          description: `1–${INTERACTIVE.buttons} reply buttons, ids unique.`,
        }),
      },
      closed,
    ),
  },
  { ...closed, title: 'InteractiveButton', description: 'Up to three reply buttons.' },
);
const InteractiveListSchema = Type.Object(
  {
    type: Type.Literal('list'),
    header: Type.Optional(TextHeader),
    ...interactiveFields,
    action: Type.Object(
      {
        button: Text(INTERACTIVE.listButton, 'The label of the button that opens the list.'),
        sections: Type.Array(ListSection, {
          minItems: 1,
          maxItems: INTERACTIVE.sections,
          description: `1–${INTERACTIVE.sections} sections, ${INTERACTIVE.rows} rows in all, ids unique.`,
        }),
      },
      closed,
    ),
  },
  { ...closed, title: 'InteractiveList', description: 'A menu of rows in sections.' },
);
const InteractiveCtaUrlSchema = Type.Object(
  {
    type: Type.Literal('cta_url'),
    header: Type.Optional(InteractiveHeaderSchema),
    ...interactiveFields,
    action: Type.Object(
      {
        name: Type.Literal('cta_url'),
        parameters: Type.Object(
          {
            displayText: Text(INTERACTIVE.ctaDisplayText, 'The button’s label.'),
            url: Type.String({ pattern: '^https?://[^\\s]+$', maxLength: 2048 }),
          },
          closed,
        ),
      },
      closed,
    ),
  },
  { ...closed, title: 'InteractiveCtaUrl', description: 'One button that opens a URL.' },
);
export const InteractiveObjectSchema = discriminated(
  [InteractiveButtonSchema, InteractiveListSchema, InteractiveCtaUrlSchema],
  { description: 'Reply buttons, a list, or a URL button, by `type`.' },
);

export const ContextSchema = Type.Object(
  { messageId: MessageId('The message quoted (`msg_…`, inbound or outbound, same contact).') },
  { ...closed, title: 'MessageContext', description: 'Quote a message: the reply shows it.' },
);

const common = {
  to: Type.Optional(
    Text(
      160,
      'The recipient: an E.164 phone (`+16505551234`), or the WhatsApp user id (BSUID, ' +
        '`US.13491208655302741918`) of a person who wrote without a phone number. Give `to` ' +
        'or `contactId`.',
    ),
  ),
  contactId: Type.Optional(Text(64, 'The recipient as a contact id (`ctc_…`).')),
  from: Type.Optional(
    Text(
      64,
      'The sender: a phone number id of the connected account (GET /messaging/numbers). ' +
        'Required only when the account has several numbers.',
    ),
  ),
  context: Type.Optional(ContextSchema),
};

const kind = <K extends string, S extends TSchema>(type: K, object: S, title: string) =>
  Type.Object(
    { ...common, type: Type.Literal(type), [type]: object } as typeof common & {
      type: ReturnType<typeof Type.Literal<K>>;
    } & { [P in K]: S },
    { ...closed, title },
  );

/** One schema per kind, in the order the document lists them. */
const SEND_KIND_SCHEMAS = [
  kind('text', TextObjectSchema, 'SendTextMessage'),
  kind('image', ImageObjectSchema, 'SendImageMessage'),
  kind('video', VideoObjectSchema, 'SendVideoMessage'),
  kind('audio', AudioObjectSchema, 'SendAudioMessage'),
  kind('document', DocumentObjectSchema, 'SendDocumentMessage'),
  kind('sticker', StickerObjectSchema, 'SendStickerMessage'),
  kind('location', LocationObjectSchema, 'SendLocationMessage'),
  kind('interactive', InteractiveObjectSchema, 'SendInteractiveMessage'),
  kind('reaction', ReactionObjectSchema, 'SendReactionMessage'),
  kind('template', TemplateSendSchema, 'SendTemplateMessage'),
] as const;

/** The body: exactly one kind, by `type`, with that kind's object under its name. */
export const SendMessageBodySchema = discriminated([...SEND_KIND_SCHEMAS], {
  title: 'SendMessageRequest',
  description: 'A message of one kind, by `type`, with that kind’s object under its name.',
  examples: [
    {
      to: '+16505551234',
      type: 'template',
      template: { name: 'hello_world', language: 'en_US' },
    },
    {
      contactId: 'ctc_7hGq2LmZ9xKa',
      type: 'text',
      text: { body: 'Your table for two is booked for 19:30.' },
    },
  ],
});
export type SendMessageBody = Static<typeof SendMessageBodySchema>;
