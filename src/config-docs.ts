/**
 * What each configuration variable is for, in the operator's words: the source of the generated
 * configuration reference (docs/reference/configuration.md, `npm run docs:generate`). The
 * accepted values and defaults come from the schema itself (config-schema.ts); this table only
 * adds the meaning and the group, and its type makes it list every variable of the schema, so a
 * new variable cannot ship undocumented.
 *
 * @see docs/reference/configuration.md
 */
import type { ConfigSchema } from './config-schema.ts';

/** The sections of the reference, in order. */
export const CONFIG_GROUPS = [
  'Service',
  'Storage',
  'External API',
  'Web pages',
  'Partner connection',
  'Encryption keys',
  'Messaging',
  'Development',
] as const;

export interface ConfigVariableDoc {
  group: (typeof CONFIG_GROUPS)[number];
  /** What the variable changes, in words. */
  meaning: string;
  /** The default in words, when it is computed rather than the schema's constant. */
  defaultText?: string;
}

export const CONFIG_DOCS: Record<keyof typeof ConfigSchema.properties, ConfigVariableDoc> = {
  NODE_ENV: { group: 'Service', meaning: '`production` turns on the production checks' },
  HOST: { group: 'Service', meaning: 'interface to listen on (`0.0.0.0` behind a load balancer)' },
  PORT: { group: 'Service', meaning: 'TCP port of the service' },
  LOG_LEVEL: { group: 'Service', meaning: 'log level; logs are JSON lines on stdout' },
  TRUST_PROXY: {
    group: 'Service',
    meaning:
      'addresses or CIDR ranges of the proxies in front (`10.0.0.0/8,…`); `true` and hop counts are refused',
  },
  SHUTDOWN_TIMEOUT_MS: {
    group: 'Service',
    meaning: 'how long SIGTERM waits for in-flight requests before exiting (ms)',
  },
  CLI_SERVER_WAIT_MS: {
    group: 'Service',
    meaning:
      'how long the CLI and a starting server wait for each other (lock taken, socket not yet open; ms)',
  },
  APP_BASE_URL: {
    group: 'Service',
    meaning: 'public origin of Portico (no path); required and `https:` in production',
    defaultText: '`http://localhost:${PORT}`',
  },
  DATA_DIR: {
    group: 'Storage',
    meaning: 'embedded database directory (used when `DATABASE_URL` is unset)',
  },
  DATABASE_URL: {
    group: 'Storage',
    meaning: 'PostgreSQL URL; replaces the embedded database',
  },
  DATABASE_LISTEN_URL: {
    group: 'Storage',
    meaning:
      'URL of the session that listens for token changes; set it when `DATABASE_URL` goes through a transaction-mode pooler',
    defaultText: '`DATABASE_URL`',
  },
  DATABASE_POOL_SIZE: { group: 'Storage', meaning: 'PostgreSQL connections per instance' },
  DATABASE_POOL_QUEUE: {
    group: 'Storage',
    meaning:
      'requests waiting for a pool connection at once; one more answers 503 `unavailable` with `Retry-After` at once',
  },
  DATABASE_STATEMENT_TIMEOUT_MS: {
    group: 'Storage',
    meaning: 'longest a PostgreSQL statement runs (ms); then 503 `unavailable`',
  },
  DATABASE_LOCK_TIMEOUT_MS: {
    group: 'Storage',
    meaning: 'longest a statement waits for a lock (ms); then 503 `unavailable`',
  },
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: {
    group: 'Storage',
    meaning: 'a session idle inside a transaction this long (ms) is ended',
  },
  DATABASE_CONNECT_TIMEOUT_MS: {
    group: 'Storage',
    meaning: 'longest wait for a pool connection (ms); then 503 `unavailable`',
  },
  REDIS_URL: {
    group: 'External API',
    meaning:
      'rate-limit counters shared by every instance; while it does not answer, the limits count per instance and `/readyz` says `degraded`',
  },
  REDIS_KEY_PREFIX: { group: 'External API', meaning: 'prefix of every Redis key Portico writes' },
  RATE_LIMIT_PER_MINUTE: { group: 'External API', meaning: 'requests per minute per API token' },
  RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: {
    group: 'External API',
    meaning: 'failed authentications per minute per client address (IPv6: per /64)',
  },
  API_CONCURRENCY: {
    group: 'External API',
    meaning:
      'requests served at once per instance; more wait their turn (see docs/decisions/0061-back-pressure.md)',
  },
  API_QUEUE: {
    group: 'External API',
    meaning:
      'requests waiting for a turn at once per instance; one more answers 503 `unavailable` with `Retry-After` at once',
  },
  API_QUEUE_TIMEOUT_MS: {
    group: 'External API',
    meaning: 'longest a request waits for its turn (ms); then 503 `unavailable` with `Retry-After`',
  },
  RATE_LIMIT_SYNC_MS: {
    group: 'External API',
    meaning:
      'with Redis: longest an instance counts locally before synchronising (ms; see docs/decisions/0004-rate-limits.md)',
  },
  TOKEN_CACHE_SIZE: {
    group: 'External API',
    meaning: 'entries in the token verification cache; `0` turns it off',
  },
  TOKEN_CACHE_TTL_MS: {
    group: 'External API',
    meaning: 'longest a verification cache entry lives, whatever else happens (ms)',
  },
  EVENTS_RETENTION_DAYS: {
    group: 'External API',
    meaning:
      'days every event is kept in the event log (`GET /events`, replays) with its delivery history; then deleted',
  },
  WEBHOOK_REPLAY_PER_SECOND: {
    group: 'External API',
    meaning: 'pace of a replay: deliveries it starts per second to its endpoint',
  },
  SESSION_TTL_SECONDS: {
    group: 'Web pages',
    meaning: 'how long a browser session lasts after sign-in (seconds)',
  },
  PROVIDER_AUTHORIZATION_BASE_URL: {
    group: 'Partner connection',
    meaning: "origin of the provider's authorization dialog (`/{version}/dialog/oauth`)",
  },
  PROVIDER_GRAPH_BASE_URL: {
    group: 'Partner connection',
    meaning: "origin of the provider's Graph API",
  },
  PROVIDER_API_VERSION: { group: 'Partner connection', meaning: 'provider API version' },
  PROVIDER_APP_ID: {
    group: 'Partner connection',
    meaning: 'app id, sent as `client_id`; unset in development: the sandbox provider starts',
  },
  PROVIDER_APP_SECRET: {
    group: 'Partner connection',
    meaning: 'app secret; only in server-side POST bodies; tickets are scanned for it',
  },
  PROVIDER_REDIRECT_URI: {
    group: 'Partner connection',
    meaning: 'registered redirect URI; production requires exactly the default over `https:`',
    defaultText: '`{APP_BASE_URL}/api/auth/partner/callback`',
  },
  PROVIDER_CONFIG_ID: {
    group: 'Partner connection',
    meaning:
      'login configuration id, sent as `config_id` when set; otherwise `scope` lists `PROVIDER_REQUIRED_PERMISSIONS`',
  },
  PROVIDER_PKCE: {
    group: 'Partner connection',
    meaning:
      'PKCE (S256) on the authorization request; the verifier stays server-side, sealed in the session',
    defaultText: '`true` (`false` in production)',
  },
  PROVIDER_REQUIRED_PERMISSIONS: {
    group: 'Partner connection',
    meaning: 'permissions Portico needs; a grant missing one is not stored',
  },
  PROVIDER_WEBHOOK_VERIFY_TOKEN: {
    group: 'Partner connection',
    meaning:
      'verify token of the provider webhook subscription; required in production, generated in development',
  },
  PROVIDER_DISPLAY_NAME: {
    group: 'Partner connection',
    meaning: 'the provider as the pages name it ("Connected to Meta")',
    defaultText: '`Meta` (`Sandbox provider` in development)',
  },
  PROVIDER_TIMEOUT_MS: { group: 'Partner connection', meaning: 'timeout of every provider call' },
  PROVIDER_HEALTH_CHECK_INTERVAL_MS: {
    group: 'Partner connection',
    meaning: 'how often each active token is checked (`debug_token`); `0` turns the checker off',
  },
  PROVIDER_HEALTH_CHECK_LEASE_MS: {
    group: 'Partner connection',
    meaning: 'how long one instance holds a connection while checking it',
  },
  PROVIDER_TOKEN_REFRESH_WINDOW_S: {
    group: 'Partner connection',
    meaning: 'a token expiring within this many seconds is refreshed (long-lived exchange)',
  },
  PROVIDER_SIGNED_REQUEST_MAX_AGE_S: {
    group: 'Partner connection',
    meaning: 'how old a provider `signed_request` (`issued_at`) may be',
  },
  TOKEN_ENCRYPTION_KEYS: {
    group: 'Encryption keys',
    meaning:
      '`kid:base64key,…` (32-byte keys), the first active; required in production (or the key file)',
  },
  TOKEN_ENCRYPTION_KEY_FILE: {
    group: 'Encryption keys',
    meaning: 'file of `kid:base64key` lines (the first active); outside `DATA_DIR` in production',
  },
  MESSAGING_CURRENCY: { group: 'Messaging', meaning: 'currency of the credit and the prices' },
  MESSAGING_PRICE_TEXT_MINOR: {
    group: 'Messaging',
    meaning: 'price of a service (free-form) message, minor units',
  },
  MESSAGING_PRICE_MARKETING_MINOR: {
    group: 'Messaging',
    meaning: 'price of a marketing template message, minor units',
  },
  MESSAGING_PRICE_UTILITY_MINOR: {
    group: 'Messaging',
    meaning: 'price of a utility template message, minor units',
  },
  MESSAGING_PRICE_AUTHENTICATION_MINOR: {
    group: 'Messaging',
    meaning: 'price of an authentication template message, minor units',
  },
  MESSAGING_RATE_PER_NUMBER: {
    group: 'Messaging',
    meaning: 'sends per second per sender number, per instance',
  },
  MESSAGING_RETRY_LIMIT: {
    group: 'Messaging',
    meaning: 'retries of a throttled or failed provider call',
  },
  MESSAGING_RETRY_DELAY_S: {
    group: 'Messaging',
    meaning: 'seconds before the first retry, doubled each time',
  },
  MESSAGING_JOB_EXPIRE_S: {
    group: 'Messaging',
    meaning: "seconds before another instance takes over a dead worker's job",
  },
  MESSAGING_SEND_CONFIRM_S: {
    group: 'Messaging',
    meaning:
      'seconds a send attempt with no answer (a worker died, a timeout) waits for its status webhook; then it fails with delivery_unknown, never sent twice',
  },
  MESSAGING_STATUS_WAIT_S: {
    group: 'Messaging',
    meaning:
      'seconds a message the provider accepted waits for its first status webhook; then it fails with status_unknown and its credit is released',
  },
  MESSAGING_WORKER_BATCH: { group: 'Messaging', meaning: 'delivery jobs a worker takes at once' },
  MESSAGING_PROVIDER_CACHE_MS: {
    group: 'Messaging',
    meaning: "how long a portal's numbers and templates are cached (ms)",
  },
  MESSAGING_CONTENT_RETENTION_DAYS: {
    group: 'Messaging',
    meaning:
      'days the content of messages in both directions is kept; then it is erased, metadata stays',
  },
  MESSAGING_MEDIA_MAX_BYTES: {
    group: 'Messaging',
    meaning:
      'largest inbound medium GET /messaging/media/{id} serves, in bytes (held in memory while checked)',
  },
  SANDBOX_PROVIDER_PORT: {
    group: 'Development',
    meaning: 'port of the development sandbox provider',
  },
};
