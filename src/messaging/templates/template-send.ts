/**
 * The `template` object of a send (`POST /messaging/messages` with `type: "template"`): the
 * Cloud API's template object in camelCase (`components` with `header` / `body` / `button`,
 * `subType` and `index`; parameters `text`, `currency`, `date_time`, `image` / `document` /
 * `video` by our media id or an https link, `payload`, `coupon_code`), and `parameters` as the
 * shorthand for the body's text variables.
 *
 * The checks against the template's definition are in template-send-check.ts; the Cloud API
 * components the delivery worker sends are built in template-wire.ts.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages#template-object
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/guides/send-message-templates
 * @see docs/messaging.md "Templates"
 */
import { Type, type Static, type TProperties } from 'typebox';

/** The most characters of one body variable (the Cloud API's body text limit). */
const TEMPLATE_TEXT_PARAMETER_MAX = 1024;
/** The most body variables a send may give. */
const TEMPLATE_BODY_PARAMETERS_MAX = 100;
/** The most characters of a text header's variable (a text header is at most 60). */
export const TEMPLATE_HEADER_TEXT_MAX = 60;
/** The most characters of a copy code button's coupon code (Cloud API). */
const COUPON_CODE_MAX = 15;
/** The most buttons a template has (Cloud API). */
const TEMPLATE_BUTTONS_MAX = 10;

const Text = (maxLength: number, description: string) =>
  Type.String({ minLength: 1, maxLength, description });
const closed = { additionalProperties: false } as const;

const mediaFields = {
  mediaId: Type.Optional(
    Type.String({
      pattern: '^med_[0-9A-Za-z]{1,60}$',
      description: 'Our id of an uploaded medium (`POST /messaging/media`).',
    }),
  ),
  link: Type.Optional(
    Type.String({
      pattern: '^https://[^\\s]+$',
      maxLength: 2048,
      description: 'An https URL the provider downloads the medium from.',
    }),
  ),
};
const MediaRefSchema = Type.Object(mediaFields, {
  ...closed,
  description: 'Exactly one of `mediaId` and `link`.',
});
const DocumentRefSchema = Type.Object(
  { ...mediaFields, filename: Type.Optional(Text(240, 'The file name shown with it.')) },
  { ...closed, description: 'Exactly one of `mediaId` and `link`.' },
);

const param = <K extends string, P extends TProperties>(kind: K, title: string, fields: P) =>
  Type.Object({ type: Type.Literal(kind), ...fields }, { ...closed, title });

const TemplateParameterSchema = Type.Union(
  [
    param('text', 'TemplateTextParameter', {
      text: Text(TEMPLATE_TEXT_PARAMETER_MAX, 'The variable’s text.'),
    }),
    param('currency', 'TemplateCurrencyParameter', {
      currency: Type.Object(
        {
          fallbackValue: Text(100, 'Shown where the amount cannot be localised.'),
          code: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217, e.g. `EUR`.' }),
          amount1000: Type.Integer({ description: 'The amount × 1000 (`12.5 EUR` is 12500).' }),
        },
        closed,
      ),
    }),
    param('date_time', 'TemplateDateTimeParameter', {
      dateTime: Type.Object({ fallbackValue: Text(100, 'The date and time as shown.') }, closed),
    }),
    param('image', 'TemplateImageParameter', { image: MediaRefSchema }),
    param('document', 'TemplateDocumentParameter', { document: DocumentRefSchema }),
    param('video', 'TemplateVideoParameter', { video: MediaRefSchema }),
    param('payload', 'TemplatePayloadParameter', {
      payload: Text(1000, 'A quick reply button’s payload, returned when it is tapped.'),
    }),
    param('coupon_code', 'TemplateCouponCodeParameter', {
      couponCode: Text(COUPON_CODE_MAX, 'A copy code button’s code.'),
    }),
  ],
  { description: 'One parameter, by `type`.' },
);
export type TemplateParameter = Static<typeof TemplateParameterSchema>;

const Parameters = (maxItems: number, description: string) =>
  Type.Array(TemplateParameterSchema, { minItems: 1, maxItems, description });

export const TemplateComponentSchema = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal('header'),
        parameters: Parameters(1, 'The header’s one parameter: text, or its image/document/video.'),
      },
      { ...closed, title: 'TemplateHeaderComponent' },
    ),
    Type.Object(
      {
        type: Type.Literal('body'),
        parameters: Parameters(
          TEMPLATE_BODY_PARAMETERS_MAX,
          'The body’s variables ({{1}}, {{2}}, …) in order: text, currency or date_time.',
        ),
      },
      { ...closed, title: 'TemplateBodyComponent' },
    ),
    Type.Object(
      {
        type: Type.Literal('button'),
        subType: Type.Enum(['quick_reply', 'url', 'copy_code'] as const, {
          description: 'The button’s kind in the template.',
        }),
        index: Type.Integer({
          minimum: 0,
          maximum: TEMPLATE_BUTTONS_MAX - 1,
          description: 'The button’s position among the template’s buttons, from 0.',
        }),
        parameters: Parameters(
          1,
          'A URL button’s suffix (text), a quick reply’s payload, a copy code’s coupon_code.',
        ),
      },
      { ...closed, title: 'TemplateButtonComponent' },
    ),
  ],
  { description: 'One component’s parameters, by `type`.' },
);
export type TemplateComponentSend = Static<typeof TemplateComponentSchema>;

export const TemplateSendSchema = Type.Object(
  {
    name: Text(512, 'The approved template name.'),
    language: Text(16, 'Its language code, e.g. `en_US`.'),
    parameters: Type.Optional(
      Type.Array(Text(TEMPLATE_TEXT_PARAMETER_MAX, 'One variable.'), {
        maxItems: TEMPLATE_BODY_PARAMETERS_MAX,
        description:
          "Shorthand for the body's text variables ({{1}}, {{2}}, …) in order; not with a `body` component.",
      }),
    ),
    components: Type.Optional(
      Type.Array(TemplateComponentSchema, {
        maxItems: TEMPLATE_BUTTONS_MAX + 2,
        description:
          'The parameters of the header, the body and each button with a variable, as the ' +
          'template defines them (checked before the message is queued).',
      }),
    ),
  },
  {
    ...closed,
    title: 'TemplateSend',
    description: 'Required when `type` is `template`.',
  },
);
export type TemplateSend = Static<typeof TemplateSendSchema>;

/** What a template message keeps of its send (sealed with its content): the parameters as given. */
export interface AcceptedTemplate {
  parameters: string[];
  components?: TemplateComponentSend[];
}
