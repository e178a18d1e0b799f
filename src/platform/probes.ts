/**
 * The orchestrator's probes: `/healthz` (the process answers) and `/readyz` (storage answers;
 * 503 in the error envelope otherwise, with `Retry-After`). An optional dependency that is down
 * (Redis) leaves the instance ready but says so: `{"status": "degraded", "degraded": ["redis"]}`,
 * still 200 — taking every instance out of the load balancer for an optional dependency would
 * turn a degraded service into an outage.
 *
 * @see https://kubernetes.io/docs/tasks/configure-pod-container/configure-liveness-readiness-startup-probes/
 * @see docs/how-to/deploy.md
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { errorResponses, sendError } from './error-envelope.ts';
import { databaseErrorCode } from './database-errors.ts';
import { AppError } from './errors.ts';
import { dependencyFaults } from './fault-summary.ts';

export async function probes(
  app: FastifyInstance,
  opts: {
    /** Rejects when storage does not answer. */
    ping: () => Promise<void>;
    /** The optional dependencies that are down now (`['redis']`), if any. */
    degraded?: () => string[];
  },
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
          200: Type.Object({
            status: Type.Union([Type.Literal('ready'), Type.Literal('degraded')]),
            degraded: Type.Optional(Type.Array(Type.String())),
          }),
          ...errorResponses(['unavailable']),
        },
      },
    },
    async (request, reply) => {
      try {
        await opts.ping();
      } catch (err) {
        dependencyFaults.note('storage', databaseErrorCode(err), request.log);
        return sendError(reply, new AppError('unavailable', 'Storage is not answering.'));
      }
      const degraded = opts.degraded?.() ?? [];
      return degraded.length > 0
        ? { status: 'degraded' as const, degraded }
        : { status: 'ready' as const };
    },
  );
}
