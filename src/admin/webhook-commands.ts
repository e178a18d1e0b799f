/**
 * The `webhook …` operator commands (CLI and admin socket alike): add, list, remove,
 * rotate-secret, test. A secret is printed only by `add` and `rotate-secret`, once.
 *
 * @see README.md "Webhooks"
 */
import { Type, type Static, type TSchema } from 'typebox';
import { CLI_ACTOR } from '../audit/audit-log.ts';
import type { Services } from '../services.ts';

const Portal = Type.String({ minLength: 1, maxLength: 32 });
const EndpointId = Type.String({ minLength: 1, maxLength: 64 });

function command<S extends TSchema>(
  args: S,
  run: (services: Services, args: Static<S>) => Promise<unknown>,
) {
  return { args, run } as {
    args: TSchema;
    run(services: Services, args: unknown): Promise<unknown>;
  };
}

export const WEBHOOK_COMMANDS = {
  'webhook add': command(
    Type.Object({
      portal: Portal,
      url: Type.String({ maxLength: 2048 }),
      events: Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 20 }),
    }),
    async (services, a) => {
      const portalId = await services.accounts.portalIdFor(a.portal);
      return services.webhooks.addEndpoint(
        portalId,
        { url: a.url, eventTypes: a.events },
        { actor: CLI_ACTOR },
      );
    },
  ),
  'webhook list': command(Type.Object({ portal: Portal }), async (services, a) => {
    const portalId = await services.accounts.portalIdFor(a.portal);
    return {
      endpoints: await services.webhooks.listEndpoints(portalId),
      deliveries: await services.webhooks.recentDeliveries(portalId, { limit: 20 }),
    };
  }),
  'webhook remove': command(
    Type.Object({ portal: Portal, id: EndpointId }),
    async (services, a) => {
      const portalId = await services.accounts.portalIdFor(a.portal);
      await services.webhooks.removeEndpoint(portalId, a.id, { actor: CLI_ACTOR });
      return { removed: a.id };
    },
  ),
  'webhook rotate-secret': command(
    Type.Object({ portal: Portal, id: EndpointId }),
    async (services, a) => {
      const portalId = await services.accounts.portalIdFor(a.portal);
      return services.webhooks.rotateSecret(portalId, a.id, { actor: CLI_ACTOR });
    },
  ),
  'webhook test': command(Type.Object({ portal: Portal, id: EndpointId }), async (services, a) => {
    const portalId = await services.accounts.portalIdFor(a.portal);
    await services.webhooks.start();
    return services.webhooks.sendTestEvent(portalId, a.id);
  }),
};
