/**
 * Request and response schemas of `GET /messaging/reports/costs` (store/costs.ts).
 *
 * @see docs/messaging.md "Credit"
 * @see docs/decisions/0056-billed-pricing.md
 */
import { Type, type Static } from 'typebox';
import { Envelope, Iso } from '../../api-kit/schema-kit.ts';

export const CostsQuerySchema = Type.Object(
  {
    since: Type.Optional(
      Iso('Start of the period (inclusive); by default 30 days before `until`.'),
    ),
    until: Type.Optional(
      Iso('End of the period (exclusive), by default now; at most 366 days after `since`.'),
    ),
  },
  { additionalProperties: false },
);
export type CostsQuery = Static<typeof CostsQuerySchema>;

const Minor = (description: string) => Type.Integer({ minimum: 0, description });

export const CostRowSchema = Type.Object(
  {
    date: Type.String({
      description: 'UTC day the messages were created, `YYYY-MM-DD`.',
      examples: ['2026-11-28'],
    }),
    phoneNumberId: Type.String({ description: 'The business number (provider id).' }),
    category: Type.String({
      description:
        'The category the provider billed (`pricing.category` of its status webhooks): ' +
        '`marketing`, `utility`, `authentication`, `authentication_international`, ' +
        '`service`, `marketing_lite`; else, until a status says, the estimated one (the ' +
        "template's category, or `service` for a free-form message).",
      examples: ['utility'],
    }),
    messages: Type.Integer({ minimum: 0, description: 'Messages sent.' }),
    billed: Type.Integer({
      minimum: 0,
      description: "Of them, those a status webhook carried the provider's pricing for.",
    }),
    billable: Type.Integer({
      minimum: 0,
      description: 'Of those, the ones the provider bills (`billable: true`).',
    }),
    estimatedMinor: Minor("Sum of the prices reserved at send time from Portico's price table."),
    chargedMinor: Minor(
      'Sum of what was charged: the price of the billed category (0 when the provider bills ' +
        'nothing), the reserved price while not billed yet.',
    ),
  },
  { title: 'CostRow' },
);
export type CostRow = Static<typeof CostRowSchema>;

export const CostsSchema = Envelope(
  Type.Object({
    since: Iso('As asked.'),
    until: Iso('As asked.'),
    currency: Type.String({ description: 'ISO 4217 currency of every amount.' }),
    rows: Type.Array(CostRowSchema, {
      description: 'Per day, business number and category with sent messages; oldest first.',
    }),
  }),
  { title: 'MessageCosts' },
);
