/**
 * Schemas of `/messaging/numbers` and `/messaging/templates`: the Cloud API's own template
 * object (Graph's field names: `name`, `language`, `category`, `components[]` with `type`,
 * `format`, `text`, `example`, `buttons`), so a template written for Graph is accepted as is.
 *
 * @see https://developers.facebook.com/docs/whatsapp/business-management-api/message-templates/components
 */
import { Type, type Static } from 'typebox';
import { Envelope, Nullable, Page } from '../../api-kit/schema-kit.ts';

const TEMPLATE_NAME_MAX = 512;
const TEMPLATE_BODY_MAX = 1024;
export const TEMPLATE_HEADER_TEXT_MAX = 60;
export const TEMPLATE_FOOTER_MAX = 60;
const TEMPLATE_PAGE_MAX = 100;
const TEMPLATE_PAGE_DEFAULT = 20;

const GraphIdSchema = Type.String({
  pattern: '^[0-9]{1,40}$',
  description: 'A Graph id (digits).',
});

const PhoneNumberSchema = Type.Object(
  {
    id: Type.String({ description: 'The phone number id: the `from` of a message.' }),
    displayPhoneNumber: Type.String({ description: 'As the provider shows it.' }),
    verifiedName: Type.String(),
    qualityRating: Type.Union(
      [Type.Literal('GREEN'), Type.Literal('YELLOW'), Type.Literal('RED'), Type.Literal('NA')],
      { description: 'The provider’s quality rating.' },
    ),
    messagingLimitTier: Nullable(
      Type.String({
        description:
          "The messaging limit of the number's business portfolio, shared by all its numbers " +
          '(`TIER_250`, `TIER_2K`, `TIER_10K`, `TIER_100K`, `TIER_UNLIMITED`), as the provider ' +
          'reports it (`whatsapp_business_manager_messaging_limit`).',
      }),
    ),
    messagingLimitPerDay: Nullable(
      Type.Integer({
        description:
          'The same limit in people: how many different people the portfolio may message ' +
          'outside a customer service window in a moving 24 hours; null for unlimited or unknown.',
      }),
    ),
    wabaId: Type.String({ description: 'The WhatsApp Business Account of the number.' }),
    onboarding: Type.Object(
      {
        webhooksSubscribed: Type.Boolean({
          description: 'Portico’s app is subscribed to the webhooks of the number’s WABA.',
        }),
        registered: Type.Boolean({ description: 'The number is registered for the Cloud API.' }),
        lastError: Nullable(
          Type.String({
            description: 'Why the last onboarding step failed; null after a success.',
          }),
        ),
        nextAttemptAt: Nullable(
          Type.String({
            format: 'date-time',
            description:
              'Not before this is registration tried again (the provider’s limit); null: any time.',
          }),
        ),
      },
      {
        title: 'NumberOnboarding',
        description:
          'Where the number stands in the onboarding after the connection: it sends only when ' +
          '`webhooksSubscribed` and `registered` are both true (else a send is 409 ' +
          '`number_not_ready`).',
      },
    ),
  },
  { title: 'PhoneNumber' },
);

export const NumbersPageSchema = Envelope(
  Type.Object({
    items: Type.Array(PhoneNumberSchema),
    nextCursor: Type.Null({ description: 'Always null: every number is in one page.' }),
  }),
  { title: 'PhoneNumberPage' },
);

const TemplateCategorySchema = Type.Union([
  Type.Literal('MARKETING'),
  Type.Literal('UTILITY'),
  Type.Literal('AUTHENTICATION'),
]);

const ButtonSchema = Type.Object(
  {
    type: Type.Union([
      Type.Literal('QUICK_REPLY'),
      Type.Literal('URL'),
      Type.Literal('PHONE_NUMBER'),
      Type.Literal('COPY_CODE'),
      Type.Literal('OTP'),
    ]),
    text: Type.Optional(Type.String({ minLength: 1, maxLength: 25 })),
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
    phone_number: Type.Optional(Type.String({ minLength: 1, maxLength: 20 })),
    otp_type: Type.Optional(Type.String({ maxLength: 20 })),
    example: Type.Optional(Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 1 })),
  },
  { additionalProperties: false },
);

export const TemplateComponentSchema = Type.Object(
  {
    type: Type.Union([
      Type.Literal('HEADER'),
      Type.Literal('BODY'),
      Type.Literal('FOOTER'),
      Type.Literal('BUTTONS'),
    ]),
    format: Type.Optional(
      Type.Union(
        [
          Type.Literal('TEXT'),
          Type.Literal('IMAGE'),
          Type.Literal('VIDEO'),
          Type.Literal('DOCUMENT'),
          Type.Literal('LOCATION'),
        ],
        { description: 'HEADER only.' },
      ),
    ),
    text: Type.Optional(
      Type.String({ minLength: 1, maxLength: TEMPLATE_BODY_MAX, description: 'With `{{1}}`…' }),
    ),
    example: Type.Optional(
      Type.Object(
        {
          header_text: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 1 })),
          header_handle: Type.Optional(
            Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 1 }),
          ),
          body_text: Type.Optional(
            Type.Array(
              Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100 }),
              {
                minItems: 1,
                maxItems: 1,
              },
            ),
          ),
        },
        { additionalProperties: false, description: 'A sample value for each variable.' },
      ),
    ),
    buttons: Type.Optional(Type.Array(ButtonSchema, { minItems: 1, maxItems: 10 })),
  },
  { additionalProperties: false },
);

export const NewTemplateBodySchema = Type.Object(
  {
    name: Type.String({
      pattern: `^[a-z0-9_]{1,${TEMPLATE_NAME_MAX}}$`,
      description: `Lower-case letters, digits and underscores, 1–${TEMPLATE_NAME_MAX}.`,
    }),
    language: Type.String({
      pattern: '^[a-z]{2,3}(_[A-Z]{2})?$',
      description: 'The provider’s language code, e.g. `en_US`, `de`.',
    }),
    category: TemplateCategorySchema,
    components: Type.Array(TemplateComponentSchema, { minItems: 1, maxItems: 4 }),
    wabaId: Type.Optional({
      ...GraphIdSchema,
      description:
        'Which WhatsApp Business Account; required only when the connection has several.',
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'order_shipped',
        language: 'en_US',
        category: 'UTILITY',
        components: [
          { type: 'HEADER', format: 'TEXT', text: 'Your order is on its way' },
          // No variable: Spectral reads a component's own `example` (its variables' sample
          // values) inside an example as an OpenAPI example keyword.
          { type: 'BODY', text: 'Your order has shipped and arrives within three days.' },
          { type: 'FOOTER', text: 'Reply STOP to opt out' },
        ],
      },
    ],
  },
);
export type NewTemplateBody = Static<typeof NewTemplateBodySchema>;

const TemplateSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    language: Type.String(),
    category: TemplateCategorySchema,
    status: Type.String({ description: 'APPROVED, PENDING, REJECTED, PAUSED, DISABLED, …' }),
    qualityScore: Type.String({
      description:
        "The provider's quality rating of the template from its recipients' feedback: GREEN, " +
        'YELLOW, RED, or UNKNOWN (not rated yet). A RED template may be paused.',
    }),
    components: Type.Array(Type.Unknown()),
    wabaId: Type.String(),
  },
  { title: 'Template' },
);

export const TemplatesPageSchema = Page(TemplateSchema, { title: 'TemplatePage' });

export const CreatedTemplateSchema = Envelope(
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    language: Type.String(),
    category: TemplateCategorySchema,
    status: Type.String({ description: '`PENDING` until the provider has reviewed it.' }),
    wabaId: Type.String(),
  }),
  { title: 'CreatedTemplate' },
);

export const ListTemplatesQuerySchema = Type.Object({
  limit: Type.Integer({
    minimum: 1,
    maximum: TEMPLATE_PAGE_MAX,
    default: TEMPLATE_PAGE_DEFAULT,
    description: `Page size, 1–${TEMPLATE_PAGE_MAX}.`,
  }),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 400, description: 'nextCursor.' })),
  status: Type.Optional(
    Type.String({ pattern: '^[A-Z_]{1,30}$', description: 'e.g. `APPROVED`, `PENDING`.' }),
  ),
  name: Type.Optional(
    Type.String({ pattern: `^[a-z0-9_]{1,${TEMPLATE_NAME_MAX}}$`, description: 'Name contains.' }),
  ),
  wabaId: Type.Optional(GraphIdSchema),
});
export type ListTemplatesQuery = Static<typeof ListTemplatesQuerySchema>;

export const TemplateNameParamsSchema = Type.Object({
  name: Type.String({
    pattern: `^[a-z0-9_]{1,${TEMPLATE_NAME_MAX}}$`,
    examples: ['order_shipped'],
  }),
});
export const DeleteTemplateQuerySchema = Type.Object({ wabaId: Type.Optional(GraphIdSchema) });
