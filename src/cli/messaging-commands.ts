/**
 * The commands for a portal's messaging credit and outbound webhooks: `credit add`, `webhook
 * add|list|remove|rotate-secret|test`. Credit is counted in integer minor units of
 * MESSAGING_CURRENCY; a webhook signing secret is printed only by `add` and `rotate-secret`,
 * once.
 *
 * @see docs/webhooks.md
 * @see docs/reference/cli.md
 */
import { Type } from 'typebox';
import { cliActor, defineCommand, integer, list, Portal, portalOption } from './command.ts';

/**
 * `500`, `EUR` → `5.00 EUR (500 minor units)`: the currency's own number of decimals
 * (ISO 4217, as Intl knows it).
 */
export function amountWords(minor: number, currency: string): string {
  const digits =
    new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions()
      .maximumFractionDigits ?? 2;
  return `${(minor / 10 ** digits).toFixed(digits)} ${currency} (${minor} minor units)`;
}

export const creditAdd = defineCommand({
  name: 'credit add',
  description: 'add credit to a portal (audited as credit.added)',
  args: Type.Object({
    portal: Portal,
    amount: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
    note: Type.String({ minLength: 1, maxLength: 500 }),
  }),
  options: {
    portal: portalOption,
    amount: {
      value: '<minor units>',
      description: 'a positive whole number of minor units, e.g. 500 for 5.00 EUR',
      parse: integer,
    },
    note: { value: '<text>', description: 'why (kept in the ledger; never a secret)' },
  },
  run: async (services, a) => {
    const portalId = await services.accounts.portalIdFor(a.portal);
    return services.messaging.addCredit({
      portalId,
      amount: a.amount,
      note: a.note,
      actor: await cliActor(),
    });
  },
  print: (c) =>
    `Credit added (${c.transactionId}). Balance ${amountWords(c.balance, c.currency)}, ` +
    `${c.reserved === 0 ? 'nothing' : amountWords(c.reserved, c.currency)} reserved.`,
});

const EndpointId = Type.String({ minLength: 1, maxLength: 64 });
const endpointOption = { value: '<endpoint>', description: 'endpoint id (ep_…)' };

interface Endpoint {
  id: string;
  url: string;
  eventTypes: string[];
  enabled: boolean;
  disabledReason: string | null;
}

const endpointLine = (e: Endpoint) =>
  `${e.id}  ${e.enabled ? 'enabled' : `disabled (${e.disabledReason ?? ''})`}  ${e.url}  ${e.eventTypes.join(',')}`;

export const webhookAdd = defineCommand({
  name: 'webhook add',
  description: 'add an endpoint; prints its signing secret once',
  args: Type.Object({
    portal: Portal,
    url: Type.String({ maxLength: 2048 }),
    events: Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 20 }),
  }),
  options: {
    portal: portalOption,
    url: { value: '<url>', description: 'https URL receiving the events' },
    events: {
      value: '<types>',
      description: 'comma-separated event types, e.g. ticket.created',
      parse: list,
    },
  },
  run: async (services, a) => {
    const portalId = await services.accounts.portalIdFor(a.portal);
    return services.webhooks.addEndpoint(
      portalId,
      { url: a.url, eventTypes: a.events },
      { actor: await cliActor() },
    );
  },
  print: ({ endpoint, secret, notice }) =>
    [
      endpointLine(endpoint),
      `Signing secret (shown once): ${secret}`,
      ...(notice ? [notice] : []),
    ].join('\n'),
});

export const webhookList = defineCommand({
  name: 'webhook list',
  description: 'endpoints and the 20 most recent deliveries',
  args: Type.Object({ portal: Portal }),
  options: { portal: portalOption },
  run: async (services, a) => {
    const portalId = await services.accounts.portalIdFor(a.portal);
    return {
      endpoints: await services.webhooks.listEndpoints(portalId),
      deliveries: await services.webhooks.recentDeliveries(portalId, { limit: 20 }),
    };
  },
  print: ({ endpoints, deliveries }) => {
    if (endpoints.length === 0) return 'No webhook endpoints.';
    const lines = endpoints.map(endpointLine);
    for (const d of deliveries) {
      lines.push(
        `  ${d.id}  ${d.eventType}  ${d.status}  attempts ${d.attempts}  ` +
          `HTTP ${d.lastStatusCode ?? '-'}  ${d.lastLatencyMs ?? '-'} ms` +
          (d.nextAttemptAt ? `  next ${d.nextAttemptAt}` : ''),
      );
    }
    return lines.join('\n');
  },
});

const EndpointArgs = Type.Object({ portal: Portal, id: EndpointId });

export const webhookRemove = defineCommand({
  name: 'webhook remove',
  description: 'remove an endpoint',
  args: EndpointArgs,
  options: { portal: portalOption, id: endpointOption },
  run: async (services, a) => {
    const portalId = await services.accounts.portalIdFor(a.portal);
    await services.webhooks.removeEndpoint(portalId, a.id, { actor: await cliActor() });
    return { removed: a.id };
  },
  print: (r) => `Removed ${r.removed}.`,
});

export const webhookRotateSecret = defineCommand({
  name: 'webhook rotate-secret',
  description: 'new signing secret; the previous one also signs for 24 hours',
  args: EndpointArgs,
  options: { portal: portalOption, id: endpointOption },
  run: async (services, a) => {
    const portalId = await services.accounts.portalIdFor(a.portal);
    return services.webhooks.rotateSecret(portalId, a.id, { actor: await cliActor() });
  },
  print: (r) =>
    `New signing secret (shown once): ${r.secret}\nThe previous secret also signs until ${String(r.previousSecretValidUntil)}.`,
});

export const webhookTest = defineCommand({
  name: 'webhook test',
  description: 'send a webhook.test event to the endpoint',
  args: EndpointArgs,
  options: { portal: portalOption, id: endpointOption },
  run: async (services, a) => {
    const portalId = await services.accounts.portalIdFor(a.portal);
    await services.webhooks.start();
    return services.webhooks.sendTestEvent(portalId, a.id);
  },
  print: (r) => `Queued test event ${r.eventId} (delivery ${r.deliveryId}).`,
});
