/**
 * `npm run bench:reference`: the bytes a browser loads for the API reference page (`/docs/`,
 * Scalar's script, the OpenAPI document), raw and as sent to a client that accepts `br` or only
 * `gzip`, and what a second load costs (a conditional request that gets 304).
 *
 * Builds the app as scripts/openapi-document.ts does (in-memory PGlite, no network but this
 * process's own loopback listener), reads each answer with `node:http` (which, unlike fetch,
 * does not decode it, so the byte counts are what travelled) and prints a Markdown table for
 * docs/performance.md. Sizes do not depend on the machine's load; no timing is taken.
 */
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.ts';
import { parseConfig } from '../src/config.ts';
import { openStorage } from '../src/db/client.ts';
import { createLogger } from '../src/platform/logger.ts';
import { createServices } from '../src/services.ts';

interface Answer {
  status: number;
  bytes: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** GET `url` with `headers`; the body's bytes as received (not decoded). */
function get(url: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({
          status: res.statusCode ?? 0,
          bytes: body.length,
          headers: res.headers,
          body: body.toString('utf8'),
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const config = parseConfig({
  NODE_ENV: 'test',
  LOG_LEVEL: 'silent',
  DATA_DIR: mkdtempSync(join(tmpdir(), 'portico-reference-bytes-')),
});
const storage = await openStorage({ kind: 'pglite-memory' });
try {
  await storage.migrate();
  const logger = createLogger('silent');
  const app = await buildApp({ services: createServices({ config, storage, logger }), logger });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const page = await get(`${base}/docs/`, { 'accept-encoding': 'identity' });
  const script = /<script[^>]*src="(js\/scalar\.js[^"]*)"/.exec(page.body)?.[1] ?? 'js/scalar.js';
  const rows = [
    '| resource | raw | gzip | br | second load |',
    '| --- | ---: | ---: | ---: | ---: |',
  ];
  for (const [name, path] of [
    ['`/docs/` (HTML)', '/docs/'],
    ['Scalar’s script', `/docs/${script}`],
    ['`/docs/openapi.json`', '/docs/openapi.json'],
  ] as const) {
    const raw = await get(`${base}${path}`, { 'accept-encoding': 'identity' });
    const gzip = await get(`${base}${path}`, { 'accept-encoding': 'gzip' });
    const br = await get(`${base}${path}`, { 'accept-encoding': 'br, gzip' });
    const etag = br.headers.etag;
    const again =
      typeof etag === 'string'
        ? await get(`${base}${path}`, { 'accept-encoding': 'br, gzip', 'if-none-match': etag })
        : undefined;
    const second = again ? `${again.status}, ${again.bytes} B` : `no validator, ${br.bytes} B`;
    rows.push(
      `| ${name} | ${raw.bytes.toLocaleString('en')} B | ${gzip.bytes.toLocaleString('en')} B | ` +
        `${br.bytes.toLocaleString('en')} B | ${second} |`,
    );
  }
  process.stdout.write(`${rows.join('\n')}\n`);
  await app.close();
} finally {
  await storage.close();
}
