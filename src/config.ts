/**
 * One typed configuration, parsed once from the environment (and an optional `.env` file) at
 * start-up. A missing or malformed value stops start-up with one line naming the variable and
 * what is expected.
 *
 * Empty values count as unset, so `FOO=` in a `.env` file falls back to the default.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Type, type Static, type TSchema } from 'typebox';
import { Value } from 'typebox/value';

const Str = (description: string, options: object = {}) =>
  Type.String({ minLength: 1, description, ...options });
const Int = (description: string, minimum: number, maximum: number, def: number) =>
  Type.Integer({ minimum, maximum, default: def, description });
const Bool = (description: string, def: boolean) =>
  Type.Boolean({ default: def, description: `true or false (${description})` });

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
  DATABASE_POOL_SIZE: Int('a pool size from 1 to 100', 1, 100, 10),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info', description: 'one of fatal, error, warn, info, debug, trace, silent' },
  ),
  TRUST_PROXY: Bool('whether to trust X-Forwarded-* headers from a load balancer', false),
  SHUTDOWN_TIMEOUT_MS: Int('milliseconds from 0 to 600000', 0, 600_000, 10_000),
  SESSION_TTL_SECONDS: Int(
    'seconds from 300 to 2592000 a browser session lasts after sign-in',
    300,
    2_592_000,
    28_800,
  ),
});

export type Config = Static<typeof ConfigSchema> & {
  /** Absolute path of DATA_DIR. */
  dataDir: string;
  isProduction: boolean;
};

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

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
    dataDir: resolve(parsed.DATA_DIR),
    isProduction: parsed.NODE_ENV === 'production',
  };
  if (config.isProduction) {
    const problem = productionProblems(config)[0];
    if (problem) throw new ConfigError(problem);
  }
  return config;
}

/** Variables whose values must never be printed, even in a config error. */
const SECRET_VARIABLES = new Set<string>(['DATABASE_URL']);

/**
 * Rules that only production enforces (DESIGN.md, security invariant 4). Each entry is the one
 * line start-up fails with.
 */
function productionProblems(_config: Config): string[] {
  const problems: string[] = [];
  return problems;
}

/**
 * Load `.env` from the working directory into `process.env` when the file exists. Variables
 * already set in the environment win.
 */
export function loadDotEnv(path = '.env'): void {
  if (existsSync(path)) process.loadEnvFile(path);
}
