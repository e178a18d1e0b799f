/**
 * A webhook receiver for tests, written as docs/how-to/webhook-receiver.md
 * tells a user to: `node:http` and the
 * Standard Webhooks reference library verifying every delivery. `answer` decides each reply
 * (a status, a status with headers, or `stall` to never answer; or a promise of one, to answer
 * later); every request is kept with its verification result.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { deadline } from '../helpers/deadlines.ts';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** The verified payload, or null when verification failed. */
  event: { type: string; timestamp: string; data: Record<string, unknown> } | null;
  at: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Secrets to verify with (the receiver guide's `new Webhook(secret)`); set after adding the endpoint. */
  secrets: string[];
  /** Resolves with the first `count` requests, or rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  /** Stalled requests whose connection the sender still holds open (not yet given up). */
  held(): number;
  /** TCP connections the receiver accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

export type Answer = number | 'stall' | { status: number; headers: Record<string, string> };

export async function startReceiver(
  answer: (n: number) => Answer | Promise<Answer> = () => 204,
): Promise<Receiver> {
  const received: Received[] = [];
  const stalled: ServerResponse[] = [];
  const secrets: string[] = [];
  const waiters: (() => void)[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      let event: Received['event'] = null;
      // The receiver guide's receiver: verify with the reference library, or refuse.
      for (const secret of secrets) {
        try {
          event = new Webhook(secret).verify(
            body,
            req.headers as Record<string, string>,
          ) as Received['event'];
          break;
        } catch {
          // try the next secret
        }
      }
      received.push({ headers: req.headers, body, event, at: Date.now() });
      for (const wake of waiters.splice(0)) wake();
      void Promise.resolve(answer(received.length)).then((reply) => {
        if (reply === 'stall') {
          stalled.push(res);
          res.on('close', () => {
            const i = stalled.indexOf(res);
            if (i >= 0) stalled.splice(i, 1);
          });
        } else if (!event) res.writeHead(400).end();
        else if (typeof reply === 'number') res.writeHead(reply).end();
        else res.writeHead(reply.status, reply.headers).end();
      });
    });
  });
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    secrets,
    async waitFor(count, timeoutMs = 10_000) {
      const giveUp = Date.now() + deadline(timeoutMs);
      while (received.length < count) {
        const left = giveUp - Date.now();
        if (left <= 0) throw new Error(`receiver got ${received.length} of ${count} requests`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return received.slice(0, count);
    },
    held: () => stalled.length,
    connections: () => connections,
    async close() {
      for (const res of [...stalled]) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Poll `check` every 50 ms until it returns a value, or fail after `timeoutMs` (scaled by
 * `deadline`) saying `what` did not happen.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const giveUp = Date.now() + deadline(timeoutMs);
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > giveUp) throw new Error(`${what} not met in time`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
