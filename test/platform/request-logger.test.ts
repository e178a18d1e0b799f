import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { AccessLogController } from '../../src/platform/access-log.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { lazyRequestLogger } from '../../src/platform/request-logger.ts';
import { captureLogs } from '../helpers/app.ts';

test('request.log: a pino child with reqId, redaction and level, made only when a line is written', async (t) => {
  const { logs, stream } = captureLogs();
  const logger = createLogger('info', stream);
  let children = 0;
  const child = logger.child.bind(logger);
  logger.child = ((...args: Parameters<typeof child>) => {
    children++;
    return child(...args);
  }) as typeof logger.child;
  const app = Fastify({
    loggerInstance: logger,
    childLoggerFactory: lazyRequestLogger,
    logController: new AccessLogController(logger),
  });
  t.after(() => app.close());
  app.get('/quiet', async (request) => {
    request.log.debug('below the level: writes nothing, makes no child');
    return { ok: true };
  });
  app.get('/loud', async (request) => {
    request.log.warn({ user: { password: 'hunter2' } }, 'something to say');
    request.log.info('and more');
    return { ok: true };
  });
  app.get('/warn-only', { logLevel: 'warn' }, async (request) => {
    assert.equal(request.log.level, 'warn');
    request.log.info('not written: the route logs at warn');
    return { ok: true };
  });
  // (The app's own error handler logs errors its way; this is Fastify's default, through
  // the request's logger.)
  app.get('/fails', async () => {
    throw new Error('boom');
  });
  await app.ready();
  const before = children;

  const quiet = await app.inject({ url: '/quiet', headers: { 'x-request-id': 'q-1' } });
  assert.equal(quiet.statusCode, 200);
  assert.equal((await app.inject({ url: '/warn-only' })).statusCode, 200);
  assert.equal(children, before, 'no child logger for requests that write no line');
  assert.ok(!logs.some((l) => l.includes('below the level') || l.includes('not written')));

  await app.inject({ url: '/loud' });
  assert.equal(children, before + 1, 'one child for the request that logs, reused');
  const said = logs.map((l) => JSON.parse(l) as Record<string, unknown>);
  const warn = said.find((l) => l.msg === 'something to say')!;
  const more = said.find((l) => l.msg === 'and more')!;
  assert.equal(typeof warn.reqId, 'string');
  assert.equal(more.reqId, warn.reqId);
  assert.deepEqual(warn.user, { password: '[REDACTED]' });

  assert.equal((await app.inject({ url: '/fails' })).statusCode, 500);
  const errored = logs
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.level === 50 && l.msg === 'boom');
  assert.ok(errored && typeof errored.reqId === 'string', 'Fastify error line keeps its reqId');
});
