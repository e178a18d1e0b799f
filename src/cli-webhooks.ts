/**
 * The `webhook` commands of the admin CLI: add, list, remove, rotate-secret, test; each with
 * `--json`, through the running server's admin socket or directly (cli-commands.ts `execute`).
 *
 * @see README.md "Webhooks"
 */
import type { Command } from 'commander';
import { action, json, portal } from './cli-commands.ts';

interface Endpoint {
  id: string;
  url: string;
  eventTypes: string[];
  enabled: boolean;
  disabledReason: string | null;
}
interface Delivery {
  id: string;
  endpointId: string;
  eventType: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastLatencyMs: number | null;
  nextAttemptAt: string | null;
}

const endpointLine = (e: Endpoint) =>
  `${e.id}  ${e.enabled ? 'enabled' : `disabled (${e.disabledReason ?? ''})`}  ${e.url}  ${e.eventTypes.join(',')}`;

/** `webhook add|list|remove|rotate-secret|test`. */
export function addWebhookCommands(program: Command): void {
  const cmd = program.command('webhook').description("a portal's outbound webhook endpoints");
  cmd
    .command('add')
    .description('add an endpoint; prints its signing secret once')
    .requiredOption(...portal)
    .requiredOption('--url <url>', 'https URL receiving the events')
    .requiredOption('--events <types>', 'comma-separated event types, e.g. ticket.created')
    .addOption(json)
    .action(
      action(
        'webhook add',
        (o) => ({
          portal: o.portal,
          url: o.url,
          events: String(o.events)
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        }),
        (r) => {
          const { endpoint, secret, notice } = r as {
            endpoint: Endpoint;
            secret: string;
            notice: string | null;
          };
          return [
            endpointLine(endpoint),
            `Signing secret (shown once): ${secret}`,
            ...(notice ? [notice] : []),
          ].join('\n');
        },
      ),
    );
  cmd
    .command('list')
    .description('endpoints and the 20 most recent deliveries')
    .requiredOption(...portal)
    .addOption(json)
    .action(
      action(
        'webhook list',
        (o) => ({ portal: o.portal }),
        (r) => {
          const { endpoints, deliveries } = r as { endpoints: Endpoint[]; deliveries: Delivery[] };
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
      ),
    );
  for (const [name, description] of [
    ['remove', 'remove an endpoint'],
    ['rotate-secret', 'new signing secret; the previous one also signs for 24 hours'],
    ['test', 'send a webhook.test event to the endpoint'],
  ] as const) {
    cmd
      .command(name)
      .description(description)
      .requiredOption(...portal)
      .requiredOption('--id <endpoint>', 'endpoint id (ep_…)')
      .addOption(json)
      .action(
        action(
          `webhook ${name}`,
          (o) => ({ portal: o.portal, id: o.id }),
          (r) => {
            const out = r as Record<string, string>;
            if (name === 'rotate-secret') {
              return `New signing secret (shown once): ${out.secret}\nThe previous secret also signs until ${out.previousSecretValidUntil}.`;
            }
            if (name === 'test')
              return `Queued test event ${out.eventId} (delivery ${out.deliveryId}).`;
            return `Removed ${out.removed}.`;
          },
        ),
      );
  }
}
