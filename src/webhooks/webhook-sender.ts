/**
 * One HTTP attempt of a delivery: `POST` the signed body to the endpoint through the address
 * guard, with one deadline for the whole exchange (connect, headers, body), reading and
 * discarding at most a few KiB of the answer. Never throws: the outcome says what happened in
 * a short fixed phrase, never with the response body (a receiver's answer may echo data).
 *
 * Connections are kept alive and reused per endpoint (`createAgentPool`): one `node:http(s)`
 * agent per endpoint and origin, at most as many sockets as the endpoint's lanes, the least
 * recently used agents closed beyond a bound. Two tenants' endpoints on one host never share
 * a socket, so one's slow answers never queue the other's requests. The address guard is the lookup of every new
 * connection, so a reused socket is one whose address was checked when it was opened; an
 * answer that ends normally returns its socket to the pool, while a timeout, an abort, an
 * error or an answer longer than the few KiB read destroys it.
 *
 * @see https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md#delivery-behavior
 * @see docs/webhooks.md "Delivery and retries"
 */
import http from 'node:http';
import https from 'node:https';
import { LRUCache } from 'lru-cache';
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
  /** Keep-alive agents per origin; without it, each attempt opens a connection of its own. */
  agents?: AgentPool;
}

/** Bounds of an agent pool. */
export interface AgentPoolSettings {
  /** Sockets per endpoint, in use or idle (its lanes: `GateSettings.perEndpoint`). */
  socketsPerEndpoint: number;
  /** Endpoints with an agent at once; the least recently used one is closed beyond it. */
  maxEndpoints: number;
  /** An idle kept-alive socket is closed after this long, in ms (unless the server's `Keep-Alive: timeout` is shorter). */
  idleMs: number;
}

export const AGENT_POOL_SETTINGS: AgentPoolSettings = {
  socketsPerEndpoint: 2,
  maxEndpoints: 1_000,
  idleMs: 4_000,
};

/** Keep-alive agents by endpoint and origin (`createAgentPool`). */
export interface AgentPool {
  /** The agent of endpoint `endpointId` for `target`'s origin (created on first use). */
  agentFor(endpointId: string, target: URL): http.Agent;
  /** Close every agent and its sockets (the worker stopping). */
  close(): void;
}

/**
 * A bounded pool of keep-alive agents, one per endpoint and origin (scheme, host, port): each
 * keeps at most `socketsPerEndpoint` sockets, idle ones for `idleMs`; beyond `maxEndpoints` the
 * least recently used agent is destroyed with its sockets.
 *
 * @see https://nodejs.org/docs/latest-v20.x/api/http.html#class-httpagent
 */
export function createAgentPool(settings: AgentPoolSettings = AGENT_POOL_SETTINGS): AgentPool {
  const agents = new LRUCache<string, http.Agent>({
    max: settings.maxEndpoints,
    dispose: (agent) => agent.destroy(),
  });
  return {
    agentFor(endpointId, target) {
      const key = `${endpointId} ${target.origin}`;
      let agent = agents.get(key);
      if (!agent) {
        const options: http.AgentOptions = {
          keepAlive: true,
          maxSockets: settings.socketsPerEndpoint,
          maxFreeSockets: settings.socketsPerEndpoint,
          timeout: settings.idleMs,
          scheduling: 'lifo',
        };
        agent = target.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
        agents.set(key, agent);
      }
      return agent;
    },
    close: () => agents.clear(),
  };
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
 * @param endpointId whose kept-alive connections to use (with `settings.agents`).
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3 (Retry-After)
 */
export function sendWebhook(
  url: string,
  body: string,
  headers: SignedHeaders,
  settings: SendSettings,
  signal?: AbortSignal,
  endpointId?: string,
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
      // Every new connection of the agent resolves through the guard (`lookup`), so a pooled
      // socket is connected to an address that was checked.
      agent: (endpointId !== undefined && settings.agents?.agentFor(endpointId, target)) || false,
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
      const done = (reuse: boolean) => {
        const ok = statusCode >= 200 && statusCode < 300;
        const throttled = statusCode === 429 || statusCode === 503;
        const header = response.headers['retry-after'];
        finish({
          statusCode,
          error: ok ? null : `HTTP ${statusCode}`,
          latencyMs,
          retryAfterMs: throttled ? retryAfterMs(header, Date.now()) : null,
        });
        // An answer read to its end leaves its socket to the agent for the next attempt.
        if (!reuse) request.destroy();
      };
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_ANSWER_BYTES) done(false);
      });
      response.on('end', () => done(true));
      response.on('error', () => done(false));
    });
    request.end(body);
  });
}
