/**
 * One HTTP call to the provider's Graph API over global `fetch` (undici), with a timeout, and
 * Graph's error envelope turned into a `ProviderError`. Every provider request of Portico goes
 * through here.
 *
 * Invariants: redirects are refused (a token never follows one); a network failure's message is
 * not kept (it may quote a URL); Graph's own error message is not kept either.
 *
 * @see https://developers.facebook.com/docs/graph-api/guides/error-handling
 */
import { classifyGraphError, ProviderError } from './provider-error.ts';

interface GraphErrorBody {
  error?: {
    message?: unknown;
    type?: unknown;
    code?: unknown;
    error_subcode?: unknown;
    fbtrace_id?: unknown;
  };
}

/**
 * Graph codes Meta's error table calls possibly transient ("API Unknown" 1, "Something went
 * wrong" 131000): answered with a 5xx they are retried like any other 5xx; with a 4xx they keep
 * their own classification.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes
 */
const POSSIBLY_TRANSIENT_CODES = new Set([1, 131000]);

export const asNumber = (v: unknown) =>
  typeof v === 'number' && Number.isFinite(v) ? v : undefined;
export const asString = (v: unknown) => (typeof v === 'string' ? v : undefined);

/**
 * Call `url` and return Graph's JSON object.
 *
 * @param timeoutMs the call's deadline, in milliseconds.
 * @param init `body` makes it a form POST, `json` a JSON POST, `form` a multipart POST (unless
 *   `method` says otherwise); `bearer` goes in the `Authorization` header.
 * @throws ProviderError only: `unavailable` for a network failure, a timeout, a 5xx without a
 *   Graph error or a 5xx carrying Graph code 1 or 131000; otherwise the kind
 *   `classifyGraphError` gives.
 */
export async function graphCall(
  timeoutMs: number,
  what: string,
  url: string,
  init: {
    body?: URLSearchParams;
    json?: unknown;
    /** A multipart body (an upload); fetch writes its boundary and streams its blobs. */
    form?: FormData;
    bearer?: string;
    method?: 'GET' | 'POST' | 'DELETE';
    signal?: AbortSignal;
  },
): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (init.bearer !== undefined) headers.authorization = `Bearer ${init.bearer}`;
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  const payload = init.json !== undefined ? JSON.stringify(init.json) : (init.form ?? init.body);
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = init.signal ? AbortSignal.any([timeout, init.signal]) : timeout;
  let res: Response;
  try {
    res = await fetch(url, {
      method: init.method ?? (payload !== undefined ? 'POST' : 'GET'),
      headers,
      ...(payload !== undefined && { body: payload }),
      redirect: 'error',
      signal,
    });
  } catch (cause) {
    const timedOut = timeout.aborted;
    const safeCause = timedOut ? undefined : sanitizeCause(cause);
    throw new ProviderError(
      'unavailable',
      timedOut
        ? `${what}: the provider did not answer within ${timeoutMs} ms`
        : `${what}: the provider could not be reached`,
      { cause: safeCause, outcomeUnknown: !NOT_SENT_CODES.has(safeCause?.code ?? '') },
    );
  }
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    throw new ProviderError(
      res.status >= 500 ? 'unavailable' : 'other',
      `${what}: the provider answered HTTP ${res.status} without JSON`,
      // A success whose body is lost may have been acted on.
      { httpStatus: res.status, outcomeUnknown: res.ok },
    );
  }
  const error = (body as GraphErrorBody | null)?.error;
  if (!res.ok || error) {
    const code = asNumber(error?.code);
    const subcode = asNumber(error?.error_subcode);
    const kind =
      res.status >= 500 && (code === undefined || POSSIBLY_TRANSIENT_CODES.has(code))
        ? 'unavailable'
        : classifyGraphError(code, subcode);
    throw new ProviderError(
      kind,
      `${what}: the provider refused (HTTP ${res.status}, Graph error ${code ?? '-'}/${subcode ?? '-'})`,
      {
        graphCode: code,
        graphSubcode: subcode,
        fbtraceId: asString(error?.fbtrace_id),
        httpStatus: res.status,
        retryAfterMs: retryAfterMs(res.headers.get('retry-after')),
      },
    );
  }
  if (typeof body !== 'object' || body === null)
    throw new ProviderError('other', `${what}: the provider answered an unexpected body`);
  return body as Record<string, unknown>;
}

/**
 * A `Retry-After` header in milliseconds: delay-seconds or an HTTP date; undefined when absent
 * or unreadable. Bounded to one hour so a wild value cannot park a queue.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3
 */
export function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  const ms = /^[0-9]{1,9}$/.test(value) ? Number(value) * 1000 : Date.parse(value) - Date.now();
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), 3_600_000) : undefined;
}

/**
 * Network failures that happen before a request is written (no connection was made): the
 * provider cannot have acted on the request. Any other failure without an answer may come
 * after the provider received it (`ProviderError.outcomeUnknown`).
 */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** Keep the error class and code of a network failure, not its message (it may quote a URL). */
function sanitizeCause(cause: unknown): { name: string; code: string | undefined } | undefined {
  if (!(cause instanceof Error)) return undefined;
  const inner = (cause as { cause?: { code?: unknown } }).cause;
  return { name: cause.name, code: typeof inner?.code === 'string' ? inner.code : undefined };
}
