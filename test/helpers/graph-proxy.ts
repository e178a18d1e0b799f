/**
 * A proxy in front of the sandbox provider, for `messagingSetup`'s `graphBaseUrl`: it forwards
 * every request (method, path, `authorization`, `content-type`, body) to the sandbox, unless
 * `intercept` answered it first.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';

/** Sees each request and its body; returns true when it has answered it itself. */
export type Intercept = (req: IncomingMessage, body: Buffer, res: ServerResponse) => boolean;

export async function graphProxy(t: Pick<TestContext, 'after'>, intercept: Intercept) {
  let target = '';
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (intercept(req, body, res)) return;
      const headers: Record<string, string> = {};
      for (const name of ['authorization', 'content-type'])
        if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
      fetch(`${target}${req.url}`, {
        method: req.method ?? 'GET',
        headers,
        ...(body.length > 0 && { body }),
      })
        .then(async (answer) => {
          res.writeHead(answer.status, {
            'content-type': answer.headers.get('content-type') ?? 'application/json',
          });
          res.end(Buffer.from(await answer.arrayBuffer()));
        })
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return async (sandboxUrl: string) => {
    target = sandboxUrl;
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
}
