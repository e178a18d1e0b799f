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

export const asNumber = (v: unknown) =>
  typeof v === 'number' && Number.isFinite(v) ? v : undefined;
export const asString = (v: unknown) => (typeof v === 'string' ? v : undefined);

/**
 * Call `url` and return Graph's JSON object.
 *
 * @param timeoutMs the call's deadline, in milliseconds.
 * @param init `body` makes it a form POST, `json` a JSON POST (unless `method` says otherwise);
 *   `bearer` goes in the `Authorization` header.
 * @throws ProviderError only: `unavailable` for a network failure, a timeout or a 5xx without a
 *   Graph error; otherwise the kind `classifyGraphError` gives.
 */
export async function graphCall(
  timeoutMs: number,
  what: string,
  url: string,
  init: {
    body?: URLSearchParams;
    /** A JSON request body (Graph's WhatsApp Cloud API nodes take JSON). */
    json?: unknown;
    bearer?: string;
    method?: 'GET' | 'POST' | 'DELETE';
    signal?: AbortSignal;
  },
): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (init.bearer !== undefined) headers.authorization = `Bearer ${init.bearer}`;
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  const body = init.json !== undefined ? JSON.stringify(init.json) : init.body;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = init.signal ? AbortSignal.any([timeout, init.signal]) : timeout;
  let res: Response;
  try {
    res = await fetch(url, {
      method: init.method ?? (body !== undefined ? 'POST' : 'GET'),
      headers,
      ...(body !== undefined && { body }),
      redirect: 'error',
      signal,
    });
  } catch (cause) {
    const timedOut = timeout.aborted;
    throw new ProviderError(
      'unavailable',
      timedOut
        ? `${what}: the provider did not answer within ${timeoutMs} ms`
        : `${what}: the provider could not be reached`,
      { cause: timedOut ? undefined : sanitizeCause(cause) },
    );
  }
  let answer: unknown;
  try {
    answer = await res.json();
  } catch {
    throw new ProviderError(
      res.status >= 500 ? 'unavailable' : 'other',
      `${what}: the provider answered HTTP ${res.status} without JSON`,
      { httpStatus: res.status },
    );
  }
  const error = (answer as GraphErrorBody | null)?.error;
  if (!res.ok || error) {
    const code = asNumber(error?.code);
    const subcode = asNumber(error?.error_subcode);
    const kind =
      res.status >= 500 && code === undefined ? 'unavailable' : classifyGraphError(code, subcode);
    throw new ProviderError(
      kind,
      `${what}: the provider refused (HTTP ${res.status}, Graph error ${code ?? '-'}/${subcode ?? '-'})`,
      {
        graphCode: code,
        graphSubcode: subcode,
        fbtraceId: asString(error?.fbtrace_id),
        httpStatus: res.status,
      },
    );
  }
  if (typeof answer !== 'object' || answer === null)
    throw new ProviderError('other', `${what}: the provider answered an unexpected body`);
  return answer as Record<string, unknown>;
}

/** Keep the error class and code of a network failure, not its message (it may quote a URL). */
function sanitizeCause(cause: unknown): unknown {
  if (!(cause instanceof Error)) return undefined;
  const inner = (cause as { cause?: { code?: unknown } }).cause;
  return { name: cause.name, code: typeof inner?.code === 'string' ? inner.code : undefined };
}
