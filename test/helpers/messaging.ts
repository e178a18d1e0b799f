/**
 * A portal ready to send WhatsApp messages, for messaging tests: the sandbox provider (its
 * Cloud API emulation, statuses delivered as signed webhooks to this app over real HTTP), the
 * app listening on a free port, a portal connected through the sandbox with credit and, in each
 * of its WABAs, the provider's `hello_world` and an approved `greeting` with one variable, and
 * the delivery queue started (workers only when asked). Or two instances over one database
 * (`messagingInstances`), for what the credit's escrow blocks must keep across instances.
 */
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse as LightResponse } from 'fastify';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import type { CloudOptions } from '../../src/sandbox-provider/sandbox-provider.tsx';
import { buildTestApp, createPortal, type TestApp } from './app.ts';
import { openInstances, type Instance } from './instances.ts';
import { connectPortal, startTestProvider, type TestProvider } from './provider.ts';
import { queryRows } from './sql.ts';
import type { Backend } from './storage.ts';

export const MESSAGES = '/api/v1/external/messaging/messages';

/**
 * A send of the sandbox's approved `hello_world` template (the provider's sample, UTILITY, no
 * variables) to `to` from `from`.
 */
export const hello = (to: string, from: string) => ({
  to,
  from,
  type: 'template',
  template: { name: 'hello_world', language: 'en_US' },
});

/** The UTILITY template with one body variable `messagingSetup` approves in each WABA. */
export const GREETING = { name: 'greeting', text: 'Hello {{1}}, thank you for your order.' };

/** A send of `greeting` to `to` from `from`, its one variable `name`. */
export const greeting = (to: string, from: string, name: string) => ({
  to,
  from,
  type: 'template',
  template: { name: GREETING.name, language: 'en_US', parameters: [name] },
});

export interface MessagingSetup extends TestApp {
  provider: TestProvider;
  portalId: number;
  token: string;
  /** The portal's two sandbox phone number ids. */
  numbers: string[];
  /** POST /messaging/messages with the portal's token. */
  send(body: object, headers?: Record<string, string>): Promise<LightResponse>;
  /** GET a message's data. */
  message(
    id: string,
  ): Promise<
    { status: string; error: { code: string; title: string } | null } & Record<string, unknown>
  >;
}

export async function messagingSetup(
  t: Pick<TestContext, 'after'>,
  backend: Backend,
  options: {
    credit?: number;
    workers?: boolean;
    cloud?: Partial<CloudOptions>;
    env?: Record<string, string>;
    /** Where the app calls Graph, given the sandbox's URL (e.g. a recording proxy). */
    graphBaseUrl?: (sandboxUrl: string) => Promise<string>;
  } = {},
): Promise<MessagingSetup> {
  const provider = await startTestProvider(t, {
    cloud: { statusDelaysMs: [50, 100, 150], ...options.cloud },
  });
  const built = await buildTestApp(t, backend, {
    ...provider.env,
    ...(options.graphBaseUrl && {
      PROVIDER_GRAPH_BASE_URL: await options.graphBaseUrl(provider.sandbox.url),
    }),
    PROVIDER_WEBHOOK_VERIFY_TOKEN: 'test-verify-token',
    MESSAGING_RETRY_DELAY_S: '1',
    // The tests poll a message's status through the API every few milliseconds; the rate limit
    // has its own tests (test/external-api/rate-limit.test.ts).
    RATE_LIMIT_PER_MINUTE: '1000000',
    ...options.env,
  });
  const url = await built.app.listen({ host: '127.0.0.1', port: 0 });
  provider.sandbox.configureApp(provider.appId, {
    webhookUrl: `${url}/api/provider/webhooks`,
    webhookVerifyToken: 'test-verify-token',
  });
  const portal = await createPortal(built.services);
  const portalId = await built.services.accounts.portalIdFor(portal.portalCode);
  await connectPortal(built.services, provider, { portalId, userId: portal.userId });
  // As if the business had a template with a variable approved (the sandbox's test hook).
  for (const wabaId of await built.services.partner.wabaIdsOf(portalId))
    provider.sandbox.cloud.templatesOf(wabaId).push({
      id: `${wabaId}7`,
      name: GREETING.name,
      language: 'en_US',
      category: 'UTILITY',
      status: 'APPROVED',
      components: [{ type: 'BODY', text: GREETING.text }],
      appId: undefined,
    });
  if (options.credit !== 0)
    await built.services.messaging.addCredit({
      portalId,
      amount: options.credit ?? 1000,
      note: 'test',
      actor: CLI_ACTOR,
    });
  await built.services.messaging.start();
  if (options.workers !== false) await built.services.messaging.startWorkers();
  const numbers = (await built.services.messagingProvider.numbers(portalId)).map((n) => n.id);
  return {
    ...built,
    provider,
    portalId,
    token: portal.token,
    numbers,
    send: (body, headers = {}) =>
      built.app.inject({
        method: 'POST',
        url: MESSAGES,
        headers: { authorization: portal.token, ...headers },
        payload: body,
      }),
    async message(id) {
      const res = await built.app.inject({
        url: `${MESSAGES}/${id}`,
        headers: { authorization: portal.token },
      });
      return res.json<{ data: Awaited<ReturnType<MessagingSetup['message']>> }>().data;
    },
  };
}

/**
 * Two instances (own services, own credit escrow; own pools on PostgreSQL) over one database, as
 * behind a load balancer, the portal connected through the sandbox with `amount` minor units of
 * credit and both delivery queues started (no workers); `hello_world` costs 4. Both stop (their
 * escrow blocks settled) before the storage closes.
 */
export async function messagingInstances(t: TestContext, backend: Backend, amount: number) {
  const provider = await startTestProvider(t);
  const instances: Instance[] = [];
  // Registered first, so it runs before openInstances closes the storage.
  t.after(async () => {
    for (const i of instances) await i.services.stop();
  });
  instances.push(
    ...(await openInstances(t, backend, 2, {
      ...provider.env,
      RATE_LIMIT_PER_MINUTE: '1000000',
      // One key for both, as instances of one deployment share it (the provider token).
      TOKEN_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    })),
  );
  const [a, b] = instances as [Instance, Instance];
  const portal = await createPortal(a.services);
  const portalId = await a.services.accounts.portalIdFor(portal.portalCode);
  await connectPortal(a.services, provider, { portalId, userId: portal.userId });
  await a.services.messaging.addCredit({ portalId, amount, note: 'n', actor: CLI_ACTOR });
  for (const i of instances) await i.services.messaging.start();
  const [from] = (await a.services.messagingProvider.numbers(portalId)).map((n) => n.id);
  let next = 0;
  const send = (instance: Instance) =>
    instance.app.inject({
      method: 'POST',
      url: MESSAGES,
      headers: { authorization: portal.token },
      payload: hello(`+1650555${String(1000 + next++)}`, from!),
    });
  const credit = (instance: Instance) => instance.services.messaging.credit({ portalId });
  const count = async (what: 'messages' | 'reserves' | 'leases') => {
    const query = {
      messages: sql`select count(*)::int as n from messages where portal_id = ${portalId}`,
      reserves: sql`select count(*)::int as n from credit_transactions
        where portal_id = ${portalId} and kind = 'reserve'`,
      leases: sql`select count(*)::int as n from credit_leases where portal_id = ${portalId}`,
    }[what];
    const [row] = await queryRows<{ n: number }>(a.services.storage, query);
    return Number(row!.n);
  };
  const accountRow = async () => {
    const [row] = await queryRows<{ balance: unknown; reserved: unknown }>(
      a.services.storage,
      sql`select balance, reserved from credit_accounts where portal_id = ${portalId}`,
    );
    return { balance: Number(row!.balance), reserved: Number(row!.reserved) };
  };
  return { a, b, portalId, send, credit, count, accountRow };
}
