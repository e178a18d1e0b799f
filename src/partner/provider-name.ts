/**
 * The provider as people read it on the pages ("Connected to Meta").
 *
 * @see docs/decisions/0009-pages.md
 */
import type { Config } from '../config.ts';

/** The names used when PROVIDER_DISPLAY_NAME is not set. */
export const DEFAULT_PROVIDER_NAMES = { real: 'Meta', sandbox: 'Sandbox provider' } as const;

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * PROVIDER_DISPLAY_NAME when set; otherwise "Sandbox provider" outside production when the
 * provider is the sandbox (started by `npm start`, or Graph on a loopback host, which
 * production refuses), else "Meta" (the provider Portico is modelled on).
 */
export function providerDisplayName(
  config: Pick<
    Config,
    'PROVIDER_DISPLAY_NAME' | 'PROVIDER_GRAPH_BASE_URL' | 'isProduction' | 'providerIsSandbox'
  >,
): string {
  if (config.PROVIDER_DISPLAY_NAME) return config.PROVIDER_DISPLAY_NAME;
  if (config.isProduction) return DEFAULT_PROVIDER_NAMES.real;
  return config.providerIsSandbox || isLoopback(config.PROVIDER_GRAPH_BASE_URL)
    ? DEFAULT_PROVIDER_NAMES.sandbox
    : DEFAULT_PROVIDER_NAMES.real;
}

function isLoopback(url: string): boolean {
  try {
    return LOOPBACK_HOST.test(new URL(url).hostname);
  } catch {
    return false;
  }
}
