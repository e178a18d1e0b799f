/**
 * The variables the service reads: name, type, bounds, default and the "what is expected" text
 * of a config error, and the typed Config that parsing them yields (config.ts parses; import
 * from there).
 *
 * Every variable's schema carries a `description`: a config error quotes it as what is expected.
 */
import { Type, type Static } from 'typebox';

const Str = (description: string, options: object = {}) =>
  Type.String({ minLength: 1, description, ...options });
const Int = (description: string, minimum: number, maximum: number, def: number) =>
  Type.Integer({ minimum, maximum, default: def, description });

/** Every variable the service reads. `description` is the "what is expected" of the error line. */
export const ConfigSchema = Type.Object({
  NODE_ENV: Type.Union(
    [Type.Literal('development'), Type.Literal('production'), Type.Literal('test')],
    { default: 'development', description: 'one of development, production, test' },
  ),
  HOST: Str('an interface address such as 127.0.0.1 or 0.0.0.0', { default: '127.0.0.1' }),
  PORT: Int('a TCP port from 0 to 65535', 0, 65535, 3000),
  DATA_DIR: Str('a directory path for the embedded database', { default: './data' }),
  DATABASE_URL: Type.Optional(
    Str('a PostgreSQL connection URL (postgres://user@host:5432/db)', {
      pattern: '^postgres(ql)?://',
    }),
  ),
  DATABASE_LISTEN_URL: Type.Optional(
    Str(
      'a PostgreSQL connection URL for the token-change listener session, when DATABASE_URL goes through a transaction-mode pooler',
      { pattern: '^postgres(ql)?://' },
    ),
  ),
  DATABASE_POOL_SIZE: Int('a pool size from 1 to 100', 1, 100, 10),
  DATABASE_POOL_QUEUE: Int(
    'requests that may wait for a pool connection at once per instance, from 0 to 100000',
    0,
    100_000,
    40,
  ),
  DATABASE_STATEMENT_TIMEOUT_MS: Int(
    'milliseconds a PostgreSQL statement may run, 0 to leave the server setting (at most 600000)',
    0,
    600_000,
    15_000,
  ),
  DATABASE_LOCK_TIMEOUT_MS: Int(
    'milliseconds a PostgreSQL statement may wait for a lock, 0 to leave the server setting (at most 600000)',
    0,
    600_000,
    5_000,
  ),
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: Int(
    'milliseconds a PostgreSQL session may sit idle inside a transaction, 0 to leave the server setting (at most 3600000)',
    0,
    3_600_000,
    60_000,
  ),
  DATABASE_CONNECT_TIMEOUT_MS: Int(
    'milliseconds to wait for a PostgreSQL connection from the pool, from 100 to 120000',
    100,
    120_000,
    5_000,
  ),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info', description: 'one of fatal, error, warn, info, debug, trace, silent' },
  ),
  TRUST_PROXY: Str(
    'false, or the addresses of the proxies in front of Portico (comma-separated IPs or CIDR ranges)',
    { default: 'false', maxLength: 2000 },
  ),
  SHUTDOWN_TIMEOUT_MS: Int('milliseconds from 0 to 600000', 0, 600_000, 10_000),
  CLI_SERVER_WAIT_MS: Int(
    'milliseconds from 0 to 600000 the CLI waits for a starting server to accept commands',
    0,
    600_000,
    60_000,
  ),
  REDIS_URL: Type.Optional(
    Str('a Redis URL (redis://host:6379 or rediss://…) shared by every instance for rate limits', {
      pattern: '^rediss?://',
    }),
  ),
  REDIS_KEY_PREFIX: Str('a prefix for every Redis key this service writes', {
    default: 'portico:',
    maxLength: 100,
  }),
  RATE_LIMIT_PER_MINUTE: Int(
    'requests per minute per API token, from 1 to 1000000',
    1,
    1_000_000,
    600,
  ),
  RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: Int(
    'failed authentications per minute per client IP, from 1 to 1000000',
    1,
    1_000_000,
    60,
  ),
  API_CONCURRENCY: Int(
    'external API requests served at once per instance, from 1 to 10000',
    1,
    10_000,
    50,
  ),
  API_QUEUE: Int(
    'external API requests that may wait for a turn at once per instance, from 0 to 100000',
    0,
    100_000,
    200,
  ),
  API_QUEUE_TIMEOUT_MS: Int(
    'milliseconds from 0 to 60000 an external API request may wait for a turn',
    0,
    60_000,
    500,
  ),
  RATE_LIMIT_SYNC_MS: Int(
    'milliseconds from 10 to 10000 an instance counts rate-limit hits locally between synchronisations with Redis',
    10,
    10_000,
    100,
  ),
  TOKEN_CACHE_SIZE: Int(
    'a number of entries from 0 (cache off) to 1000000 for the API token verification cache',
    0,
    1_000_000,
    10_000,
  ),
  TOKEN_CACHE_TTL_MS: Int(
    'milliseconds from 1000 to 86400000 that a verification cache entry may live',
    1_000,
    86_400_000,
    300_000,
  ),
  SESSION_TTL_SECONDS: Int(
    'seconds from 300 to 2592000 a browser session lasts after sign-in',
    300,
    2_592_000,
    28_800,
  ),

  // ---- Partner connection (the provider) -------------------------------------------------
  APP_BASE_URL: Type.Optional(
    Str('the public origin of Portico, such as https://portico.example.com (no path)', {
      pattern: '^https?://[^/?#\\s]+$',
    }),
  ),
  PROVIDER_AUTHORIZATION_BASE_URL: Str(
    'the origin of the provider authorization dialog, such as https://www.facebook.com',
    { pattern: '^https?://[^?#\\s]+[^/?#\\s]$', default: 'https://www.facebook.com' },
  ),
  PROVIDER_GRAPH_BASE_URL: Str(
    'the origin of the provider Graph API, such as https://graph.facebook.com',
    { pattern: '^https?://[^?#\\s]+[^/?#\\s]$', default: 'https://graph.facebook.com' },
  ),
  PROVIDER_API_VERSION: Str('a provider API version such as v21.0', {
    pattern: '^v[0-9]+\\.[0-9]+$',
    default: 'v21.0',
  }),
  PROVIDER_APP_ID: Type.Optional(
    Str('the provider app id (digits or letters, sent as client_id)', {
      pattern: '^[A-Za-z0-9_-]{1,100}$',
    }),
  ),
  PROVIDER_APP_SECRET: Type.Optional(
    Str('the provider app secret (at least 16 characters)', { minLength: 16, maxLength: 512 }),
  ),
  PROVIDER_REDIRECT_URI: Type.Optional(
    Str('the registered redirect URI, {APP_BASE_URL}/api/auth/partner/callback', {
      pattern: '^https?://',
    }),
  ),
  PROVIDER_CONFIG_ID: Type.Optional(
    Str('a provider login configuration id (sent as config_id only when set)', {
      pattern: '^[A-Za-z0-9_-]{1,100}$',
    }),
  ),
  PROVIDER_REQUIRED_PERMISSIONS: Str(
    'a comma-separated list of provider permissions Portico needs',
    {
      pattern: '^[a-z0-9_]+(,[a-z0-9_]+)*$',
      default: 'business_management,whatsapp_business_messaging,whatsapp_business_management',
    },
  ),
  PROVIDER_PKCE: Type.Optional(
    Type.Union([Type.Literal('true'), Type.Literal('false')], {
      description:
        'true or false: send a PKCE (S256) code challenge with the authorization request; unset, true outside production',
    }),
  ),
  PROVIDER_WEBHOOK_VERIFY_TOKEN: Type.Optional(
    Str(
      'the verify token of the provider webhook subscription (16 to 256 visible ASCII characters, no spaces)',
      { pattern: '^[\\x21-\\x7e]{16,256}$' },
    ),
  ),
  PROVIDER_DISPLAY_NAME: Type.Optional(
    Str('the provider as the pages name it, such as Meta (1 to 60 characters)', {
      minLength: 1,
      maxLength: 60,
    }),
  ),
  PROVIDER_TIMEOUT_MS: Int('milliseconds from 100 to 120000', 100, 120_000, 10_000),
  PROVIDER_HEALTH_CHECK_INTERVAL_MS: Int(
    'milliseconds between token health checks, 0 to turn the checker off (at most 86400000)',
    0,
    86_400_000,
    900_000,
  ),
  PROVIDER_HEALTH_CHECK_LEASE_MS: Int(
    'milliseconds one instance may hold a connection while checking it (1000 to 3600000)',
    1_000,
    3_600_000,
    120_000,
  ),
  PROVIDER_TOKEN_REFRESH_WINDOW_S: Int(
    'seconds before expiry at which a token is refreshed (0 to 5184000)',
    0,
    5_184_000,
    604_800,
  ),
  PROVIDER_SIGNED_REQUEST_MAX_AGE_S: Int(
    'seconds a provider signed_request stays acceptable after issued_at (10 to 86400)',
    10,
    86_400,
    900,
  ),
  TOKEN_ENCRYPTION_KEYS: Type.Optional(
    Str('kid:base64key pairs separated by commas; the first is active; 32-byte keys', {
      pattern: '^[A-Za-z0-9_-]{1,32}:[A-Za-z0-9+/=_-]+(,[A-Za-z0-9_-]{1,32}:[A-Za-z0-9+/=_-]+)*$',
    }),
  ),
  TOKEN_ENCRYPTION_KEY_FILE: Type.Optional(
    Str('a path to a file of kid:base64key lines (first is active), outside DATA_DIR'),
  ),
  MESSAGING_CURRENCY: Str('an ISO 4217 currency code such as EUR', {
    pattern: '^[A-Z]{3}$',
    default: 'EUR',
  }),
  MESSAGING_PRICE_TEXT_MINOR: Int('minor units per text message, 0 to 1000000', 0, 1_000_000, 1),
  MESSAGING_PRICE_MARKETING_MINOR: Int(
    'minor units per marketing template message, 0 to 1000000',
    0,
    1_000_000,
    11,
  ),
  MESSAGING_PRICE_UTILITY_MINOR: Int(
    'minor units per utility template message, 0 to 1000000',
    0,
    1_000_000,
    4,
  ),
  MESSAGING_PRICE_AUTHENTICATION_MINOR: Int(
    'minor units per authentication template message, 0 to 1000000',
    0,
    1_000_000,
    4,
  ),
  MESSAGING_RATE_PER_NUMBER: Int(
    'messages per second per sender number and instance, 1 to 1000',
    1,
    1_000,
    80,
  ),
  MESSAGING_RETRY_LIMIT: Int('delivery retries of a throttled or failed call, 0 to 50', 0, 50, 8),
  MESSAGING_RETRY_DELAY_S: Int('seconds before the first delivery retry, 1 to 3600', 1, 3_600, 2),
  MESSAGING_JOB_EXPIRE_S: Int(
    'seconds a delivery job may run before another instance takes it over, 10 to 3600',
    10,
    3_600,
    60,
  ),
  MESSAGING_SEND_CONFIRM_S: Int(
    'seconds a send attempt without an outcome waits for its status webhook, 1 to 604800',
    1,
    604_800,
    900,
  ),
  MESSAGING_STATUS_WAIT_S: Int(
    'seconds an accepted message waits for its first status webhook, 1 to 2592000',
    1,
    2_592_000,
    86_400,
  ),
  MESSAGING_WORKER_BATCH: Int('delivery jobs a worker takes at once, 1 to 500', 1, 500, 50),
  MESSAGING_PROVIDER_CACHE_MS: Int(
    "milliseconds a portal's numbers and templates are cached, 0 to 3600000",
    0,
    3_600_000,
    30_000,
  ),
  MESSAGING_CONTENT_RETENTION_DAYS: Int(
    'days message content (texts, captions, file names, …) is kept, both directions, 1 to 3650',
    1,
    3_650,
    90,
  ),
  MESSAGING_MEDIA_MAX_BYTES: Int(
    'bytes from 1 to 104857600 (100 MiB)',
    1,
    100 * 1024 * 1024,
    100 * 1024 * 1024,
  ),
  EVENTS_RETENTION_DAYS: Int(
    'days events are kept in the event log (GET /events, replays), 1 to 3650',
    1,
    3_650,
    30,
  ),
  WEBHOOK_REPLAY_PER_SECOND: Int(
    'deliveries a replay sends per second to its endpoint, 1 to 1000',
    1,
    1_000,
    10,
  ),
  SANDBOX_PROVIDER_PORT: Int('a TCP port from 0 to 65535', 0, 65535, 3001),
});

export type Config = Omit<Static<typeof ConfigSchema>, 'APP_BASE_URL' | 'TRUST_PROXY'> & {
  /**
   * Which hops' `X-Forwarded-*` headers are believed, in the form Fastify's `trustProxy` takes:
   * `false` (none) or the proxies' addresses and ranges. Never "every hop", nor a hop count.
   * @see docs/how-to/deploy.md "Graceful restarts"
   */
  TRUST_PROXY: false | string[];
  /** Public origin; defaults to `http://localhost:${PORT}` outside production. */
  APP_BASE_URL: string;
  /** Absolute path of DATA_DIR. */
  dataDir: string;
  /** NODE_ENV is `production`, so parsing enforced the production rules. */
  isProduction: boolean;
  /** True when main.ts filled the provider settings from a sandbox provider it started. */
  providerIsSandbox?: boolean;
};
