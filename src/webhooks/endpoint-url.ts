/**
 * What URL an endpoint may have, checked when it is saved (the address guard checks again on
 * every delivery, on the resolved address). Production: `https:` only, no credentials, no IP
 * literal or name that is plainly not public. Development: `https:` anywhere, and `http:` to
 * this machine only (localhost, 127.0.0.1, ::1), which the answer says.
 *
 * @see docs/webhooks.md "Endpoints"
 */
import { AppError } from '../platform/errors.ts';
import { checkLiteralHost, RefusedAddressError, type AddressPolicy } from './address-guard.ts';

/** Longest accepted URL, in characters. */
export const MAX_URL_LENGTH = 2048;

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

function refused(message: string): AppError {
  return new AppError('invalid_request', message, { details: [{ field: 'url', message }] });
}

/**
 * Validate and normalise an endpoint URL.
 *
 * @returns the URL (WHATWG-serialised) and, for a development-only `http:` URL, a notice.
 * @throws AppError `invalid_request` (details `url`) saying what is wrong.
 */
export function checkEndpointUrl(
  input: string,
  policy: AddressPolicy,
): { url: string; notice: string | null } {
  if (input.length > MAX_URL_LENGTH) throw refused(`must be at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw refused('must be an absolute URL, e.g. https://example.com/webhooks');
  }
  if (url.username || url.password) throw refused('must not contain a user name or password');
  if (url.hash) throw refused('must not contain a fragment (#…)');
  const host = url.hostname.toLowerCase();
  if (url.protocol === 'http:') {
    if (policy === 'public-only') throw refused('must use https:');
    if (!LOCAL_HOSTS.has(host)) {
      throw refused('must use https: (http: is allowed in development for localhost only)');
    }
    return {
      url: url.href,
      notice: 'http: to this machine is allowed because Portico runs in development.',
    };
  }
  if (url.protocol !== 'https:') throw refused('must use https:');
  if (policy === 'public-only') {
    if (host === 'localhost' || host.endsWith('.localhost')) {
      throw refused('must not point at this machine (localhost)');
    }
    try {
      checkLiteralHost(policy, host);
    } catch (err) {
      if (err instanceof RefusedAddressError) {
        throw refused('must not point at a loopback, private, link-local or metadata address');
      }
      throw err;
    }
  }
  return { url: url.href, notice: null };
}
