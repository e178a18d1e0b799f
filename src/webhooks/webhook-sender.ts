/**
 * One HTTP attempt of a delivery: `POST` the signed body to the endpoint through the address
 * guard, with one deadline for the whole exchange (connect, headers, body), reading and
 * discarding at most a few KiB of the answer. Never throws: the outcome says what happened in
 * a short fixed phrase, never with the response body (a receiver's answer may echo data).
 *
 * @see https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md#delivery-behavior
 * @see docs/webhooks.md "Delivery and retries"
 */
import http from 'node:http';
import https from 'node:https';
import {
  checkLiteralHost,
  guardedLookup,
  RefusedAddressError,
  type AddressPolicy,
  type Resolver,
} from './address-guard.ts';
import type { SignedHeaders } from './webhook-signing.ts';

/** What one attempt ended in. `statusCode` is null when no response arrived. */
export interface AttemptOutcome {
  statusCode: number | null;
  /**
   * `null` for a 2xx; else e.g. `HTTP 500`, `timeout`, `refused address`, `connection failed`,
   * or `aborted` (the worker stopped mid-attempt).
   */
  error: string | null;
  /** Milliseconds from the start to the response's headers, or to the failure. */
  latencyMs: number;
  /** `Retry-After` of a 429 or 503, in milliseconds (delta-seconds or an HTTP date). */
  retryAfterMs: number | null;
}

/** Answer bytes read before the connection is dropped (the body is never stored). */
const MAX_ANSWER_BYTES = 4096;

export interface SendSettings {
  policy: AddressPolicy;
  resolver: Resolver;
  /** Deadline of one attempt, in milliseconds (15 000 in production). */
  timeoutMs: number;
}

/** `Retry-After` (RFC 9110 §10.2.3) → milliseconds from now, or null. */
export function retryAfterMs(value: string | undefined, now: number): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * Post `body` to `url` with the signed headers.
 *
 * @param signal ends the attempt at once (outcome `aborted`) when aborted.
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3 (Retry-After)
 */
export function sendWebhook(
  url: string,
  body: string,
  headers: SignedHeaders,
  settings: SendSettings,
  signal?: AbortSignal,
): Promise<AttemptOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false;
    const finish = (o: Omit<AttemptOutcome, 'latencyMs'> & { latencyMs?: number }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve({ latencyMs: elapsed(), ...o });
    };
    const fail = (error: string) => finish({ statusCode: null, error, retryAfterMs: null });
    let target: URL;
    try {
      target = new URL(url);
      checkLiteralHost(settings.policy, target.hostname);
    } catch (err) {
      settled = true;
      resolve({
        statusCode: null,
        error: err instanceof RefusedAddressError ? 'refused address' : 'invalid URL',
        latencyMs: 0,
        retryAfterMs: null,
      });
      return;
    }
    const client = target.protocol === 'https:' ? https : http;
    const request = client.request(target, {
      method: 'POST',
      lookup: guardedLookup(settings.policy, settings.resolver),
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'user-agent': 'Portico-Webhooks/1',
        ...headers,
      },
    });
    const timer = setTimeout(() => {
      fail('timeout');
      request.destroy();
    }, settings.timeoutMs);
    const onAbort = () => {
      fail('aborted');
      request.destroy();
    };
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    request.on('error', (err: NodeJS.ErrnoException) => {
      fail(err instanceof RefusedAddressError ? 'refused address' : 'connection failed');
    });
    request.on('response', (response) => {
      const statusCode = response.statusCode ?? 0;
      const latencyMs = elapsed();
      let read = 0;
      const done = () => {
        const ok = statusCode >= 200 && statusCode < 300;
        const throttled = statusCode === 429 || statusCode === 503;
        const header = response.headers['retry-after'];
        finish({
          statusCode,
          error: ok ? null : `HTTP ${statusCode}`,
          latencyMs,
          retryAfterMs: throttled ? retryAfterMs(header, Date.now()) : null,
        });
        request.destroy();
      };
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_ANSWER_BYTES) done();
      });
      response.on('end', done);
      response.on('error', done);
    });
    request.end(body);
  });
}
