/**
 * One typed configuration, parsed once from the environment (and an optional `.env` file) at
 * start-up. A missing or malformed value stops start-up with one line naming the variable and
 * what is expected.
 *
 * Empty values count as unset, so `FOO=` in a `.env` file falls back to the default.
 */
import { existsSync } from 'node:fs';
import { isIP, isIPv4, isIPv6 } from 'node:net';
import { isAbsolute, relative, resolve } from 'node:path';
import type { Static, TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { ConfigSchema, type Config } from './config-schema.ts';
import { ConfigError } from './platform/errors.ts';
import { parseKeySpec } from './platform/keyring.ts';

export { ConfigSchema, type Config };

/** Path of the redirect URI under APP_BASE_URL (docs/partner-connection.md). */
export const PARTNER_CALLBACK_PATH = '/api/auth/partner/callback';

/** Path of the provider's webhooks under APP_BASE_URL (docs/partner-connection.md). */
export const PROVIDER_WEBHOOKS_PATH = '/api/provider/webhooks';

export { ConfigError } from './platform/errors.ts';

function describe(schema: TSchema | undefined): string {
  const d = (schema as { description?: unknown } | undefined)?.description;
  return typeof d === 'string' ? d : 'a valid value';
}

/**
 * Parse `env` into a Config.
 *
 * @throws ConfigError with one line: `NAME: expected <what> (got "<value>")`, or a production
 *   rule that failed. Values of secret variables are never echoed.
 */
export function parseConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const props = ConfigSchema.properties as Record<string, TSchema>;
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(props)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const value = Value.Convert(ConfigSchema, Value.Default(ConfigSchema, raw));
  const [first] = Value.Errors(ConfigSchema, value);
  if (first) {
    const name =
      first.instancePath.replace(/^\//, '') ||
      ((first.params as { requiredProperties?: string[] }).requiredProperties?.[0] ?? '?');
    const got = env[name];
    const shown = got === undefined || SECRET_VARIABLES.has(name) ? '' : ` (got "${got}")`;
    throw new ConfigError(`${name}: expected ${describe(props[name])}${shown}`);
  }
  const parsed = value as Static<typeof ConfigSchema>;
  const config: Config = {
    ...parsed,
    TRUST_PROXY: parseTrustProxy(parsed.TRUST_PROXY),
    // Cross-field default: the public origin follows PORT unless set (production requires it).
    APP_BASE_URL: parsed.APP_BASE_URL ?? `http://localhost:${parsed.PORT}`,
    dataDir: resolve(parsed.DATA_DIR),
    isProduction: parsed.NODE_ENV === 'production',
  };
  if (config.TOKEN_ENCRYPTION_KEYS) {
    try {
      parseKeySpec(config.TOKEN_ENCRYPTION_KEYS);
    } catch (err) {
      throw new ConfigError(`TOKEN_ENCRYPTION_KEYS: ${(err as Error).message}`);
    }
  }
  if (config.isProduction) {
    const problem = productionProblems(config, parsed.APP_BASE_URL !== undefined)[0];
    if (problem) throw new ConfigError(problem);
  }
  return config;
}

/** Named address ranges that Fastify's `trustProxy` (proxy-addr) understands. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isAddressOrRange(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  const bits = family === 4 ? 32 : 128;
  return /^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= bits;
}

/**
 * TRUST_PROXY: `false` (the socket's address is the client) or a comma-separated list of the
 * proxies' addresses or CIDR ranges (also `loopback`, `linklocal`, `uniquelocal`): a request
 * whose peer is one of them has its client address taken from the right-most
 * `X-Forwarded-For` entry that is not a trusted proxy.
 *
 * @throws ConfigError for `true` (trusting every hop makes the left-most `X-Forwarded-For`
 *   entry, which the client writes, its address) and for a hop count (Fastify refuses hop
 *   counts since 5.12: they cannot check that the request came through the proxy at all).
 * @see docs/decisions/0004-rate-limits.md
 */
export function parseTrustProxy(raw: string): false | string[] {
  const value = raw.trim().toLowerCase();
  if (value === 'false') return false;
  if (value === 'true')
    throw new ConfigError(
      'TRUST_PROXY: true would trust every X-Forwarded-For entry, which clients can forge; set the addresses of the proxies in front of Portico (e.g. 10.0.0.0/8)',
    );
  if (/^[0-9]+$/.test(value))
    throw new ConfigError(
      'TRUST_PROXY: a hop count cannot tell a proxy from a client that forges X-Forwarded-For; set the addresses of the proxies in front of Portico (e.g. 10.0.0.0/8)',
    );
  const entries = value.split(',').map((e) => e.trim());
  if (entries.every(isAddressOrRange)) return entries;
  throw new ConfigError(`TRUST_PROXY: expected ${describe(propsOf().TRUST_PROXY)} (got "${raw}")`);
}

/** Variables whose values must never be printed, even in a config error. */
const SECRET_VARIABLES = new Set<string>([
  'DATABASE_URL',
  'DATABASE_LISTEN_URL',
  'PROVIDER_APP_SECRET',
  'PROVIDER_WEBHOOK_VERIFY_TOKEN',
  'REDIS_URL',
  'TOKEN_ENCRYPTION_KEYS',
]);

/**
 * Whether a URL host can only be this machine (so a local emulator such as the sandbox provider,
 * never the real provider): `localhost` (with or without a trailing dot), 127.0.0.0/8, 0.0.0.0,
 * `::1`, `::` and IPv4-mapped loopback.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIPv4(host)) return host.startsWith('127.') || host === '0.0.0.0';
  if (isIPv6(host)) {
    if (host === '::1' || host === '::') return true;
    // IPv4-mapped (::ffff:127.0.0.1, normalised by URL to ::ffff:7f00:1).
    const mapped = /^::ffff:(.+)$/.exec(host)?.[1];
    if (mapped) return mapped.startsWith('127.') || /^7f[0-9a-f]{2}:/.test(mapped);
  }
  return false;
}

/** App ids the sandbox provider generates; a real provider never issues them. */
export const SANDBOX_APP_ID_PREFIX = 'sandbox';

/**
 * Rules that only production enforces (docs/security.md, invariant 4). Each entry
 * is the one line start-up fails with.
 *
 * Cross-field rules: the redirect URI must be exactly `{APP_BASE_URL}/api/auth/partner/callback`
 * over HTTPS with no query, because the provider compares it byte for byte and the callback
 * route is the only registered target. The provider must not be the sandbox: its URLs would be
 * loopback addresses or its app id the sandbox's generated one.
 */
export function productionProblems(config: Config, appBaseUrlSet = true): string[] {
  const problems: string[] = [];
  const missing = (name: string) =>
    problems.push(`${name}: required in production (${describe(propsOf()[name])})`);
  if (!config.TOKEN_ENCRYPTION_KEYS && !config.TOKEN_ENCRYPTION_KEY_FILE)
    problems.push(
      'TOKEN_ENCRYPTION_KEYS: required in production (or TOKEN_ENCRYPTION_KEY_FILE); provider tokens are encrypted with a key held outside the database',
    );
  if (
    config.TOKEN_ENCRYPTION_KEY_FILE &&
    isInside(resolve(config.TOKEN_ENCRYPTION_KEY_FILE), config.dataDir)
  )
    problems.push('TOKEN_ENCRYPTION_KEY_FILE: must be outside DATA_DIR in production');
  if (config.TOKEN_ENCRYPTION_KEY_FILE && !existsSync(config.TOKEN_ENCRYPTION_KEY_FILE))
    problems.push('TOKEN_ENCRYPTION_KEY_FILE: the file does not exist');
  if (!appBaseUrlSet) missing('APP_BASE_URL');
  else if (!config.APP_BASE_URL.startsWith('https://'))
    problems.push('APP_BASE_URL: must use https: in production');
  if (!config.PROVIDER_APP_ID) missing('PROVIDER_APP_ID');
  else if (config.PROVIDER_APP_ID.toLowerCase().startsWith(SANDBOX_APP_ID_PREFIX))
    problems.push(
      "PROVIDER_APP_ID: is the sandbox provider's app; production needs the real provider",
    );
  if (!config.PROVIDER_APP_SECRET) missing('PROVIDER_APP_SECRET');
  for (const name of ['PROVIDER_AUTHORIZATION_BASE_URL', 'PROVIDER_GRAPH_BASE_URL'] as const) {
    const url = URL.parse(config[name]);
    if (!url) problems.push(`${name}: expected an absolute URL`);
    else if (url.protocol !== 'https:') problems.push(`${name}: must use https: in production`);
    else if (isLoopbackHost(url.hostname) || config.providerIsSandbox)
      problems.push(`${name}: points at the sandbox provider; production needs the real provider`);
  }
  const redirect = config.PROVIDER_REDIRECT_URI;
  const expected = `${config.APP_BASE_URL}${PARTNER_CALLBACK_PATH}`;
  if (!redirect) missing('PROVIDER_REDIRECT_URI');
  else if (redirect.startsWith('http:'))
    problems.push('PROVIDER_REDIRECT_URI: must use https: in production (spec 5.3)');
  else if (redirect !== expected)
    problems.push(
      `PROVIDER_REDIRECT_URI: must be exactly ${expected} (no query, no trailing slash; spec 5.3)`,
    );
  // Without it the provider's webhook subscription cannot be verified, so no delivery report or
  // inbound message would ever arrive (docs/decisions/0014-whatsapp-cloud-api.md).
  if (!config.PROVIDER_WEBHOOK_VERIFY_TOKEN) missing('PROVIDER_WEBHOOK_VERIFY_TOKEN');
  return problems;
}

function propsOf(): Record<string, TSchema> {
  return ConfigSchema.properties;
}

function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** The provider settings, complete, or null when the app id, secret or redirect URI is unset. */
export interface ProviderSettings {
  authorizationBaseUrl: string;
  graphBaseUrl: string;
  apiVersion: string;
  appId: string;
  appSecret: string;
  redirectUri: string;
  configId: string | undefined;
  requiredPermissions: string[];
  /**
   * Whether the authorization request carries a PKCE code challenge (S256) and the code
   * exchange its verifier (PROVIDER_PKCE; unset: on outside production).
   * @see https://www.rfc-editor.org/rfc/rfc9700#section-2.1.1
   */
  pkce: boolean;
  timeoutMs: number;
  /** The verify token of the webhook subscription; undefined: every verification is refused. */
  webhookVerifyToken: string | undefined;
}

/**
 * The provider settings of `config`. The redirect URI defaults (outside production, where
 * production rules require it) to `{APP_BASE_URL}/api/auth/partner/callback`.
 */
export function providerSettings(config: Config): ProviderSettings | null {
  if (!config.PROVIDER_APP_ID || !config.PROVIDER_APP_SECRET) return null;
  return {
    authorizationBaseUrl: config.PROVIDER_AUTHORIZATION_BASE_URL,
    graphBaseUrl: config.PROVIDER_GRAPH_BASE_URL,
    apiVersion: config.PROVIDER_API_VERSION,
    appId: config.PROVIDER_APP_ID,
    appSecret: config.PROVIDER_APP_SECRET,
    redirectUri: config.PROVIDER_REDIRECT_URI ?? `${config.APP_BASE_URL}${PARTNER_CALLBACK_PATH}`,
    configId: config.PROVIDER_CONFIG_ID,
    requiredPermissions: config.PROVIDER_REQUIRED_PERMISSIONS.split(','),
    pkce:
      config.PROVIDER_PKCE === undefined ? !config.isProduction : config.PROVIDER_PKCE === 'true',
    timeoutMs: config.PROVIDER_TIMEOUT_MS,
    webhookVerifyToken: config.PROVIDER_WEBHOOK_VERIFY_TOKEN,
  };
}

/**
 * Load `.env` from the working directory into `process.env` when the file exists. Variables
 * already set in the environment win.
 */
export function loadDotEnv(path = '.env'): void {
  if (existsSync(path)) process.loadEnvFile(path);
}
