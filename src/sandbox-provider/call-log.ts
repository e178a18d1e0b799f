/**
 * The sandbox's log of every request it receives, in arrival order, for tests: which endpoint was
 * called and, once a surface knows it, whose token the call used. It records the path and query
 * only, never a body or a header, so tests can assert that no secret or token travels in a URL.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SandboxCall } from './sandbox-state.ts';
import type { NoteCall } from './surface.ts';

/**
 * Log every request of `app` into `calls` (appended on arrival, before routing, so a 404 or a
 * refused request is logged too).
 *
 * Must run before the surfaces are registered: a Fastify hook applies to the plugins registered
 * after it.
 *
 * @returns the function surfaces use to add the person and app of a logged request.
 */
export function logCalls(app: FastifyInstance, calls: SandboxCall[]): NoteCall {
  // Keyed by the request object: an entry lives exactly as long as its request.
  const callOf = new WeakMap<FastifyRequest, SandboxCall>();
  app.addHook('onRequest', async (request) => {
    const call: SandboxCall = { method: request.method, url: request.url };
    callOf.set(request, call);
    calls.push(call);
  });
  return (request, userId, appId) => {
    const call = callOf.get(request);
    if (call) Object.assign(call, userId && { userId }, appId && { appId });
  };
}
