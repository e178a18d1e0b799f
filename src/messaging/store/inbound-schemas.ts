/**
 * The API's shape of an inbound message (a message a person sent to a business number), as
 * `GET /messaging/messages` and the `message.received` webhook event give it: one definition for
 * validation, types and OpenAPI.
 *
 * @see docs/messaging.md "Inbound messages"
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/components#messages-object
 */
import { Type, type Static } from 'typebox';
import { Iso, Nullable } from '../../api-kit/schema-kit.ts';

const Str = (description?: string) => Type.String(description ? { description } : {});
const Opt = Type.Optional;

const InboundMediaSchema = Type.Object(
  {
    id: Str('Our medium (`med_…`): `GET /messaging/media/{id}` downloads its bytes.'),
    mimeType: Str('As the provider gave it, e.g. `image/jpeg`.'),
    sha256: Nullable(Str(), {
      description: 'Lower-case hex SHA-256 of the bytes, when the provider gave it.',
    }),
    fileSize: Nullable(Type.Integer(), { description: 'Bytes, once known.' }),
    caption: Nullable(Str(), {
      description: 'The caption the person wrote (image, video, document).',
    }),
    filename: Nullable(Str(), {
      description: "A document's file name, as the person's phone named it.",
    }),
    animated: Opt(Type.Boolean({ description: 'A sticker: animated or not.' })),
    voice: Opt(
      Type.Boolean({
        description:
          'An `audio`: true for a voice message recorded in WhatsApp, false for an audio file.',
      }),
    ),
  },
  { description: 'For `image`, `audio`, `video`, `document` and `sticker`.' },
);

const LocationSchema = Type.Object(
  {
    latitude: Type.Number(),
    longitude: Type.Number(),
    name: Opt(Str()),
    address: Opt(Str()),
    url: Opt(Str()),
  },
  { description: 'For `location`.' },
);

const SharedContactSchema = Type.Object({
  name: Type.Object({ formattedName: Str(), firstName: Opt(Str()), lastName: Opt(Str()) }),
  phones: Opt(Type.Array(Type.Object({ phone: Opt(Str()), waId: Opt(Str()), type: Opt(Str()) }))),
  emails: Opt(Type.Array(Type.Object({ email: Opt(Str()), type: Opt(Str()) }))),
  org: Opt(Type.Object({ company: Opt(Str()), department: Opt(Str()), title: Opt(Str()) })),
  urls: Opt(Type.Array(Type.Object({ url: Opt(Str()), type: Opt(Str()) }))),
});

const InteractiveReplySchema = Type.Union(
  [
    Type.Object({
      type: Type.Literal('button_reply'),
      buttonReply: Type.Object({ id: Str(), title: Str() }),
    }),
    Type.Object({
      type: Type.Literal('list_reply'),
      listReply: Type.Object({ id: Str(), title: Str(), description: Opt(Str()) }),
    }),
  ],
  { description: 'For `interactive`: the reply button or list row the person chose.' },
);

/**
 * The click-to-WhatsApp ad (or post) a message came from, as Meta's `referral` names it.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/text
 */
export const ReferralSchema = Type.Object(
  {
    sourceUrl: Opt(Str("The ad's or post's URL.")),
    sourceId: Opt(Str("The ad's or post's id (Meta's `source_id`).")),
    sourceType: Opt(Str('`ad` or `post`.')),
    headline: Opt(Str("The ad's headline.")),
    body: Opt(Str("The ad's text.")),
    mediaType: Opt(Str('`image` or `video`.')),
    imageUrl: Opt(Str()),
    videoUrl: Opt(Str()),
    thumbnailUrl: Opt(Str()),
    ctwaClid: Opt(Str("The ad click's id (`ctwa_clid`), for Meta's Conversions API.")),
    welcomeMessage: Opt(Type.Object({ text: Opt(Str()) })),
  },
  {
    title: 'Referral',
    description:
      'The click-to-WhatsApp ad or post the person tapped before writing: on the first ' +
      'message after the tap. Each field only when Meta gives it.',
  },
);

export const InboundMessageSchema = Type.Object(
  {
    id: Str('Message id (`msg_…`), in the same space as outbound messages.'),
    direction: Type.Literal('inbound'),
    from: Str(
      'The person: E.164, or their WhatsApp user id (BSUID, `US.1349…`) when they wrote with a ' +
        'username and no phone number.',
    ),
    contactId: Nullable(Str(), {
      description: 'The contact who wrote (`ctc_…`); null once erased.',
    }),
    waUserId: Opt(
      Str(
        "The sender's business-scoped user id (`US.1349…`) as the provider gave it with this " +
          'message: in the `message.received` and `message.reaction` events (the contact keeps the ' +
          'current one).',
      ),
    ),
    username: Opt(
      Str(
        "The sender's WhatsApp username, when they use one and the provider gave it with this " +
          'message: in the `message.received` and `message.reaction` events (the contact keeps the ' +
          'current one).',
      ),
    ),
    phoneNumberId: Str('The business number written to: its phone number id.'),
    providerMessageId: Str("The provider's id (wamid)."),
    type: Str(
      'The Cloud API type: `text`, `image`, `audio`, `video`, `document`, `sticker`, ' +
        '`location`, `contacts`, `interactive`, `button`, `reaction`, or `unsupported` (with ' +
        'the provider type in `unsupported.providerType`).',
    ),
    text: Opt(Type.Object({ body: Str() }, { description: 'For `text`.' })),
    media: Opt(InboundMediaSchema),
    location: Opt(LocationSchema),
    contacts: Opt(Type.Array(SharedContactSchema, { description: 'For `contacts`.' })),
    interactive: Opt(InteractiveReplySchema),
    button: Opt(
      Type.Object(
        { payload: Str(), text: Str() },
        { description: "For `button`: a template's quick-reply button tapped." },
      ),
    ),
    reaction: Opt(
      Type.Object(
        {
          messageId: Nullable(Str(), {
            description: 'The message reacted to (`msg_…`), when Portico knows it.',
          }),
          providerMessageId: Str('The wamid of the message reacted to.'),
          emoji: Str('The emoji; empty when the person removed their reaction.'),
        },
        { description: 'For `reaction`.' },
      ),
    ),
    unsupported: Opt(
      Type.Object(
        {
          providerType: Str(
            "What the person sent: the provider's `unsupported.type` (e.g. `edit`, " +
              '`poll_creation`) or the type Portico does not read (e.g. `order`, `system`).',
          ),
          errors: Type.Array(Type.Object({ code: Type.Integer(), title: Str() })),
        },
        { description: 'For a type Portico does not read.' },
      ),
    ),
    context: Nullable(
      Type.Object({
        messageId: Nullable(Str(), {
          description: 'The message replied to (`msg_…`), when Portico knows it.',
        }),
        providerMessageId: Nullable(Str(), { description: 'The wamid of the message replied to.' }),
        forwarded: Type.Boolean({ description: 'The person forwarded this message.' }),
        frequentlyForwarded: Type.Boolean({
          description: 'The message was forwarded more than five times before it reached here.',
        }),
      }),
      { description: 'What this message replies to (or that it was forwarded); null if none.' },
    ),
    referral: Opt(ReferralSchema),
    contentErased: Opt(
      Type.Literal(true, {
        description:
          "The content is gone (retention period passed, or the contact was erased): the type's object is absent.",
      }),
    ),
    receivedAt: Iso('When the person sent it.'),
    readAt: Nullable(Type.String({ format: 'date-time' }), {
      description: 'When the business marked it read.',
    }),
  },
  { title: 'InboundMessage', description: 'A message a person sent to a business number.' },
);
export type InboundMessage = Static<typeof InboundMessageSchema>;
