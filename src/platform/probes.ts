/**
 * The orchestrator's probes: `/healthz` (the process answers) and `/readyz` (storage answers;
 * 503 in the error envelope otherwise).
 *
 * @see https://kubernetes.io/docs/tasks/configure-pod-container/configure-liveness-readiness-startup-probes/
 * @see docs/how-to/deploy.md
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { errorResponses, sendError } from './error-envelope.ts';
import { AppError } from './errors.ts';

export async function probes(
  app: FastifyInstance,
  opts: { /** Rejects when storage does not answer. */ ping: () => Promise<void> },
): Promise<void> {
  app.get(
    '/healthz',
    {
      logLevel: 'warn',
      schema: { response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
    },
    async () => ({ status: 'ok' as const }),
  );
  app.get(
    '/readyz',
    {
      logLevel: 'warn',
      schema: {
        response: {
          200: Type.Object({ status: Type.Literal('ready') }),
          ...errorResponses(['unavailable']),
        },
      },
    },
    async (request, reply) => {
      try {
        await opts.ping();
        return { status: 'ready' };
      } catch (err) {
        request.log.warn({ err }, 'storage is not answering');
        return sendError(reply, new AppError('unavailable', 'Storage is not answering.'));
      }
    },
  );
}
