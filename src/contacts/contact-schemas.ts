/**
 * Request and response schemas of `/crm/contacts` (validation, types and OpenAPI from one
 * definition). The import validates each row with the same `ContactFieldsSchema`, compiled by
 * TypeBox, so a row is refused for exactly what a single create would refuse.
 *
 * @see docs/reference/external-api.md "The capability areas"
 */
import { Type, type Static, type TSchema } from 'typebox';
import { CONSENT_SCOPES, CONSENT_SOURCES, CONSENT_STATES } from '../db/schema/contacts.ts';
import { Envelope, Iso, Nullable, Page } from '../api-kit/schema-kit.ts';
import { NO_CONTROL_PATTERN } from '../platform/plain-text.ts';
import { PHONE_INPUT_MAX } from './phone.ts';

export const NAME_MAX = 100;
export const EMAIL_MAX = 254;
export const TAGS_MAX = 20;
export const TAG_MAX = 50;
export const ATTRIBUTES_MAX = 50;
export const ATTRIBUTE_KEY_PATTERN = '^[a-zA-Z][a-zA-Z0-9_]{0,39}$';
export const ATTRIBUTE_VALUE_MAX = 500;
export const IMPORT_MAX = 1000;
export const PAGE_LIMIT_MAX = 100;
export const PAGE_LIMIT_DEFAULT = 20;
export const Q_MAX = 100;

/** No control nor bidirectional characters (platform/plain-text.ts). */
const NO_CONTROL = NO_CONTROL_PATTERN;
const Text = (max: number, description: string) =>
  Type.String({ minLength: 1, maxLength: max, pattern: NO_CONTROL, description });

export const ConsentStateSchema = Type.Enum(CONSENT_STATES, {
  title: 'ConsentState',
  description: 'WhatsApp consent: `opted_in`, `opted_out` or `unknown`.',
});

const PhoneInput = Type.String({
  minLength: 1,
  maxLength: PHONE_INPUT_MAX,
  pattern: NO_CONTROL,
  description:
    'Phone with its country code, in any common notation (`+1 650-555-1234`, `0044 20 7946 ' +
    '0958`); stored in E.164.',
});
const Email = Type.String({
  minLength: 3,
  maxLength: EMAIL_MAX,
  format: 'email',
  description: `Email address, up to ${EMAIL_MAX} characters.`,
});
const AttributeValue = Type.Unsafe<string | number | boolean>({
  type: ['string', 'number', 'boolean'],
  maxLength: ATTRIBUTE_VALUE_MAX,
  pattern: NO_CONTROL,
  description: `A string (up to ${ATTRIBUTE_VALUE_MAX} characters), number or boolean; no nesting.`,
});
const Attributes = <V = string | number | boolean>(value: TSchema) =>
  Type.Unsafe<Record<string, V>>({
    type: 'object',
    maxProperties: ATTRIBUTES_MAX,
    propertyNames: { pattern: ATTRIBUTE_KEY_PATTERN },
    additionalProperties: value,
    description:
      `Up to ${ATTRIBUTES_MAX} custom fields; keys match \`${ATTRIBUTE_KEY_PATTERN}\`, values ` +
      'are strings, numbers or booleans.',
  });
const Tags = Type.Array(Text(TAG_MAX, `A tag, 1–${TAG_MAX} characters.`), {
  maxItems: TAGS_MAX,
  uniqueItems: true,
  description: `Up to ${TAGS_MAX} distinct tags.`,
});
const ConsentInput = Type.Object(
  { whatsapp: ConsentStateSchema },
  { additionalProperties: false, description: 'Consent to be messaged, per channel.' },
);

const fields = {
  email: Email,
  firstName: Text(NAME_MAX, `First name, 1–${NAME_MAX} characters.`),
  lastName: Text(NAME_MAX, `Last name, 1–${NAME_MAX} characters.`),
  attributes: Attributes(AttributeValue),
  tags: Tags,
  consent: ConsentInput,
};

/** The writable fields other than the phone, each optional. */
const optionalFields = {
  email: Type.Optional(fields.email),
  firstName: Type.Optional(fields.firstName),
  lastName: Type.Optional(fields.lastName),
  attributes: Type.Optional(fields.attributes),
  tags: Type.Optional(fields.tags),
  consent: Type.Optional(fields.consent),
};

/** The writable fields of a contact, phone required (create, import rows). */
export const ContactFieldsSchema = Type.Object(
  {
    phone: PhoneInput,
    ...optionalFields,
  },
  {
    additionalProperties: false,
    examples: [
      {
        phone: '+16505551234',
        firstName: 'Ada',
        lastName: 'Lovelace',
        email: 'ada@example.com',
        attributes: { plan: 'pro', seats: 5 },
        tags: ['customer'],
        consent: { whatsapp: 'opted_in' },
      },
    ],
  },
);
export type ContactFields = Static<typeof ContactFieldsSchema>;

/** `PUT /crm/contacts/by-phone/{phone}`: the fields without phone (the path carries it). */
export const UpsertContactBodySchema = Type.Object(optionalFields, {
  additionalProperties: false,
  examples: [{ firstName: 'Ada', tags: ['customer'], consent: { whatsapp: 'opted_in' } }],
});
export type UpsertContactBody = Static<typeof UpsertContactBodySchema>;

/** JSON merge patch (RFC 7396): a field set to null is removed, an attribute set to null too. */
export const PatchContactBodySchema = Type.Object(
  {
    phone: Type.Optional(PhoneInput),
    email: Type.Optional(Nullable(fields.email)),
    firstName: Type.Optional(Nullable(fields.firstName)),
    lastName: Type.Optional(Nullable(fields.lastName)),
    attributes: Type.Optional(
      Nullable(
        Attributes<string | number | boolean | null>(
          Type.Unsafe({
            type: ['string', 'number', 'boolean', 'null'],
            maxLength: ATTRIBUTE_VALUE_MAX,
            pattern: NO_CONTROL,
          }),
        ),
      ),
    ),
    tags: Type.Optional(Nullable(fields.tags)),
    consent: Type.Optional(fields.consent),
  },
  {
    additionalProperties: false,
    examples: [{ lastName: 'King', email: null, attributes: { plan: 'enterprise', seats: null } }],
  },
);
export type PatchContactBody = Static<typeof PatchContactBodySchema>;

export const ImportBodySchema = Type.Object(
  {
    contacts: Type.Array(
      Type.Unsafe<unknown>({ description: 'A contact, as in `POST /crm/contacts`.' }),
      {
        minItems: 1,
        maxItems: IMPORT_MAX,
        description: `1–${IMPORT_MAX} contacts; each row is checked on its own.`,
      },
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        contacts: [
          { phone: '+16505551234', firstName: 'Ada', tags: ['import'] },
          { phone: '+44 20 7946 0958', firstName: 'Charles', consent: { whatsapp: 'unknown' } },
        ],
      },
    ],
  },
);

export const ContactSchema = Type.Object(
  {
    id: Type.String({ pattern: '^ctc_[0-9A-Za-z]+$', description: 'Contact id (`ctc_…`).' }),
    phone: Nullable(
      Type.String({
        description:
          'E.164, e.g. `+16505551234`; null for a person who wrote with a WhatsApp username ' +
          'and no phone number (known by `waUserId`).',
      }),
    ),
    waUserId: Nullable(
      Type.String({
        description:
          "The person's business-scoped user id (BSUID) from WhatsApp, e.g. " +
          '`US.13491208655302741918`: a send may name it in `to`.',
      }),
    ),
    parentWaUserId: Nullable(
      Type.String({
        description: 'The parent BSUID WhatsApp gives for a managed business (`US.ENT.…`).',
      }),
    ),
    username: Nullable(
      Type.String({ description: "The person's WhatsApp username, when shared." }),
    ),
    profileName: Nullable(
      Type.String({ description: "The person's WhatsApp profile name, as last received." }),
    ),
    email: Nullable(Type.String()),
    firstName: Nullable(Type.String()),
    lastName: Nullable(Type.String()),
    attributes: Type.Record(
      Type.String(),
      Type.Union([Type.String(), Type.Number(), Type.Boolean()]),
    ),
    tags: Type.Array(Type.String()),
    consent: Type.Object({
      whatsapp: ConsentStateSchema,
      updatedAt: Iso('When the consent state was last set.'),
      source: Type.Enum(CONSENT_SOURCES, {
        description: 'Who set it: api, import, web, provider, keyword.',
      }),
    }),
    lastInboundAt: Nullable(Iso('When the contact last wrote in (24-hour service window).')),
    createdAt: Iso('ISO 8601, UTC.'),
    updatedAt: Iso('ISO 8601, UTC.'),
  },
  { title: 'Contact', description: 'A CRM contact.' },
);
export type Contact = Static<typeof ContactSchema>;

export const ContactEnvelopeSchema = Envelope(ContactSchema, { title: 'ContactEnvelope' });

export const ConsentChangeSchema = Type.Object(
  {
    from: ConsentStateSchema,
    to: ConsentStateSchema,
    source: Type.Enum(CONSENT_SOURCES, {
      description:
        'Who changed it: api, import, web, provider (for `marketing`: the person in WhatsApp), ' +
        'keyword (the person wrote one).',
    }),
    scope: Type.Enum(CONSENT_SCOPES, {
      description:
        'What it covers: `whatsapp` (every message: `consentWhatsapp`) or `marketing` (marketing ' +
        'templates from `phoneNumberId`: the person stopped or resumed them in WhatsApp).',
    }),
    phoneNumberId: Nullable(
      Type.String({ description: 'For `marketing`: the business number it applies to.' }),
    ),
    messageId: Nullable(Type.String({ description: 'The inbound message of the keyword.' })),
    at: Iso('When.'),
  },
  { title: 'ConsentChange', description: "A change of the contact's WhatsApp consent." },
);
export type ConsentChange = Static<typeof ConsentChangeSchema>;

export const ContactDetailSchema = Type.Object(
  {
    ...ContactSchema.properties,
    consentHistory: Type.Array(ConsentChangeSchema, {
      description: 'The newest consent changes (up to 20), newest first.',
    }),
  },
  { title: 'ContactDetail', description: 'A CRM contact with its consent history.' },
);
export type ContactDetail = Static<typeof ContactDetailSchema>;
export const ContactDetailEnvelopeSchema = Envelope(ContactDetailSchema, {
  title: 'ContactDetailEnvelope',
});

export const ContactPageSchema = Page(ContactSchema, {
  items: 'Newest first.',
  title: 'ContactPage',
});

export const ErasureSchema = Envelope(
  Type.Object({
    id: Type.String({ description: 'The erased contact id.' }),
    erasedAt: Iso('When the erasure happened.'),
    erased: Type.Record(Type.String(), Type.Integer(), {
      description:
        'Rows deleted, by kind (`contact`; `drafts` addressed to the person alone; ' +
        '`webhookEvents` carrying what the person wrote).',
    }),
    anonymised: Type.Record(Type.String(), Type.Integer(), {
      description:
        'Rows kept but stripped of the person, by kind (`storedResponses`: stored ' +
        '`Idempotency-Key` responses naming the person, kept so a replay answers as before; ' +
        '`messageRecipients`: messages to the contact or its phone; `inboundMessages`; ' +
        '`drafts` the person was one recipient of; `tickets`, `ticketComments`, `ticketNotes` ' +
        'whose text named the person).',
    }),
    failed: Type.Record(Type.String(), Type.Integer(), {
      description:
        'Messages to the person still queued, failed with `recipient_erased` and their ' +
        'credit released (`queuedMessages`).',
    }),
  }),
  { title: 'ContactErasure' },
);

export const ImportResultSchema = Envelope(
  Type.Object({
    created: Type.Integer(),
    updated: Type.Integer(),
    unchanged: Type.Integer(),
    failed: Type.Array(
      Type.Object({ index: Type.Integer(), field: Type.String(), message: Type.String() }),
      { description: 'Rows not written (0-based `index`), with the field at fault.' },
    ),
  }),
  { title: 'ContactImportResult' },
);

export const ListContactsQuerySchema = Type.Object({
  // Optional: the server fills the default (Ajv's useDefaults), so a client need not send it.
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: PAGE_LIMIT_MAX,
      default: PAGE_LIMIT_DEFAULT,
      description: `Page size, 1–${PAGE_LIMIT_MAX} (default ${PAGE_LIMIT_DEFAULT}).`,
    }),
  ),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'nextCursor.' })),
  tag: Type.Optional(Text(TAG_MAX, 'Only contacts with this tag.')),
  consent: Type.Optional(ConsentStateSchema),
  q: Type.Optional(
    Text(Q_MAX, 'Case-insensitive prefix of first name, last name, email, or phone digits.'),
  ),
  updatedSince: Type.Optional(Iso('Only contacts updated at or after this instant.')),
  waUserId: Type.Optional(
    Type.String({
      minLength: 4,
      maxLength: 160,
      description: 'Only the contact with this business-scoped user id (BSUID).',
    }),
  ),
});
export type ListContactsQuery = Static<typeof ListContactsQuerySchema>;

export const ContactParamsSchema = Type.Object({
  id: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'Contact id (`ctc_…`).',
    examples: ['ctc_7hGq2LmZ9xKa'],
  }),
});
export const PhoneParamsSchema = Type.Object({
  phone: Type.String({ ...PhoneInput, examples: ['+16505551234'] }),
});
