/**
 * The schemas of `/keys` (named, with examples, in the OpenAPI document).
 *
 * @see docs/how-to/restrict-an-api-key.md
 */
import { Type } from 'typebox';
import { KEY_RATE_LIMIT_MAX, MAX_ROTATION_OVERLAP_S } from '../accounts/api-keys-service.ts';
import { MAX_ALLOWED_IPS } from '../accounts/ip-allow-list.ts';
import { MAX_USAGE_DAYS } from '../accounts/key-usage-report.ts';
import { SCOPES } from '../accounts/scopes.ts';
import { Envelope, Iso, Nullable } from '../api-kit/schema-kit.ts';

const ScopeList = Type.Array(Type.Enum(SCOPES, { title: 'Scope' }), {
  minItems: 1,
  maxItems: SCOPES.length,
  uniqueItems: true,
  description: 'What the key may do; at most the scopes of the key that creates it.',
});
const AllowedIps = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
  maxItems: MAX_ALLOWED_IPS,
  description:
    'Addresses and CIDR ranges, IPv4 and IPv6, the key may be used from (the client address ' +
    'as the server sees it behind its trusted proxies). Absent, null or empty: any address.',
  examples: [['203.0.113.0/24', '2001:db8::/32']],
});

export const ApiKeySchema = Type.Object(
  {
    id: Type.Integer({ description: 'The key id.' }),
    name: Type.String({ description: 'What the key is for.' }),
    hint: Type.String({ description: 'The last 4 characters of the current secret.' }),
    scopes: Type.Array(Type.Enum(SCOPES, { title: 'Scope' })),
    expiresAt: Nullable(Iso('When the key stops working (401 `token_expired`); null: never.')),
    allowedIps: Nullable(
      Type.Array(Type.String(), {
        description: 'Normalised CIDR ranges the key may be used from; null: any address.',
      }),
    ),
    rateLimitPerMinute: Nullable(
      Type.Integer({ description: "The key's own limit; null: the service's per-key limit." }),
    ),
    createdAt: Iso('When the current secret was issued.'),
    lastUsedAt: Nullable(Iso('When the key last authenticated a request (to about 10 s).')),
    lastUsedIp: Nullable(Type.String({ description: 'The client address of that request.' })),
    previousSecretValidUntil: Nullable(
      Iso('After a rotation with an overlap: until when the previous secret still works.'),
    ),
  },
  {
    title: 'ApiKey',
    examples: [
      {
        id: 7,
        name: 'Billing server',
        hint: 'x9Qa',
        scopes: ['messaging:send'],
        expiresAt: '2027-06-30T00:00:00.000Z',
        allowedIps: ['203.0.113.0/24', '2001:db8::/32'],
        rateLimitPerMinute: 120,
        createdAt: '2026-11-28T09:00:00.000Z',
        lastUsedAt: '2026-11-28T10:15:20.000Z',
        lastUsedIp: '203.0.113.7',
        previousSecretValidUntil: null,
      },
    ],
  },
);

export const ApiKeyWithSecret = Type.Object(
  {
    key: ApiKeySchema,
    secret: Type.String({
      description: 'The secret, in clear: shown this once only. Send it as the API token.',
    }),
  },
  { title: 'ApiKeyWithSecret' },
);

export const NewApiKeyBodySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'What the key is for.' }),
    scopes: ScopeList,
    expiresAt: Type.Optional(
      Nullable(Iso('When the key stops working; in the future. Absent or null: never.')),
    ),
    allowedIps: Type.Optional(Nullable(AllowedIps)),
    rateLimitPerMinute: Type.Optional(
      Nullable(
        Type.Integer({
          minimum: 1,
          maximum: KEY_RATE_LIMIT_MAX,
          description: "Requests per minute for this key (the service's per-key limit if lower).",
        }),
      ),
    ),
  },
  {
    title: 'NewApiKey',
    additionalProperties: false,
    examples: [
      {
        name: 'Billing server',
        scopes: ['messaging:send'],
        expiresAt: '2027-06-30T00:00:00Z',
        allowedIps: ['203.0.113.0/24', '2001:db8::/32'],
      },
    ],
  },
);

export const RotateApiKeyBodySchema = Type.Object(
  {
    overlapSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_ROTATION_OVERLAP_S,
        description:
          'How long the previous secret keeps working, in seconds (at most 86400, 24 hours). ' +
          'Absent or 0: it stops at once.',
      }),
    ),
  },
  { title: 'RotateApiKey', additionalProperties: false, examples: [{ overlapSeconds: 3600 }] },
);

export const KeyParams = Type.Object({
  id: Type.String({ pattern: '^[1-9][0-9]{0,9}$', description: 'The key id.', examples: ['42'] }),
});

export const UsageQuery = Type.Object({
  days: Type.Optional(
    Type.String({
      pattern: '^[1-9][0-9]?$',
      description: `Days back, today included (1–${MAX_USAGE_DAYS}; default 30).`,
    }),
  ),
});

const StatusClasses = Type.Object({
  '2xx': Type.Integer(),
  '3xx': Type.Integer(),
  '4xx': Type.Integer(),
  '5xx': Type.Integer(),
});

export const ApiKeyUsageSchema = Type.Object(
  {
    keyId: Type.Integer(),
    days: Type.Array(
      Type.Object({
        day: Type.String({ format: 'date', description: 'UTC day.' }),
        requests: Type.Integer(),
        byStatusClass: StatusClasses,
      }),
      { description: 'Oldest first, one entry per day (0 when unused).' },
    ),
    operations: Type.Array(
      Type.Object({
        operation: Type.String({ description: 'Method and route, e.g. `GET /auth/verify`.' }),
        statusClass: Type.String({ description: '`2xx`, `3xx`, `4xx` or `5xx`.' }),
        requests: Type.Integer(),
      }),
      { description: 'Requests over the period by operation and status class, busiest first.' },
    ),
    lastUsedAt: Nullable(Iso('When the key last authenticated a request.')),
    lastUsedIp: Nullable(Type.String({ description: 'The client address of that request.' })),
  },
  {
    title: 'ApiKeyUsage',
    description:
      'Counted in memory and written every few seconds: the last seconds may be missing.',
    examples: [
      {
        keyId: 7,
        days: [
          {
            day: '2026-11-28',
            requests: 42,
            byStatusClass: { '2xx': 40, '3xx': 0, '4xx': 2, '5xx': 0 },
          },
        ],
        operations: [
          { operation: 'POST /messaging/messages', statusClass: '2xx', requests: 40 },
          { operation: 'POST /messaging/messages', statusClass: '4xx', requests: 2 },
        ],
        lastUsedAt: '2026-11-28T10:15:20.000Z',
        lastUsedIp: '203.0.113.7',
      },
    ],
  },
);

export const ApiKeyListEnvelope = Envelope(Type.Object({ items: Type.Array(ApiKeySchema) }), {
  title: 'ApiKeyList',
});
export const RevokedApiKeyEnvelope = Envelope(
  Type.Object({ id: Type.Integer(), revoked: Type.Literal(true) }),
  { title: 'RevokedApiKeyEnvelope' },
);
