/**
 * `tickets reply` and `tickets status` as the CLI runs them on storage it opens itself
 * (`cli/local.ts`), for a portal with a webhook endpoint: the change is made and its events are
 * queued for the server to deliver.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { hashApiToken } from '../../src/accounts/api-token.ts';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { runLocally } from '../../src/cli/local.ts';
import { openStorage, storageTargetFor } from '../../src/db/client.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createServices } from '../../src/services.ts';
import { createPortal, testConfig } from '../helpers/app.ts';
import { backends, createPostgresDatabase } from '../helpers/storage.ts';

for (const backend of backends()) {
  describe(`tickets commands for a portal with a webhook endpoint (${backend.name})`, () => {
    test('reply and status change the ticket and queue its events', async (t) => {
      let env: Record<string, string>;
      if (backend.name === 'postgres') {
        const { url, drop } = await createPostgresDatabase();
        t.after(drop);
        env = { DATABASE_URL: url };
      } else {
        env = { DATA_DIR: mkdtempSync(join(tmpdir(), 'portico-cli-wh-')) };
      }
      const config = testConfig(env);

      // The portal, its endpoint, a ticket and an agent, as the server would have stored them.
      const storage = await openStorage(storageTargetFor(config));
      await storage.migrate();
      const services = createServices({ config, storage, logger: createLogger('silent') });
      const portal = await createPortal(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      await services.webhooks.addEndpoint(
        portalId,
        {
          url: 'https://hooks.example.com/portico',
          eventTypes: ['ticket.updated', 'ticket.comment_added'],
        },
        { actor: CLI_ACTOR },
      );
      const principal = (await services.accounts.principalForTokenHash(
        hashApiToken(portal.token),
      ))!;
      const { body } = await services.tickets.createTicket({
        principal,
        input: { subject: 'Printer', description: 'It jams.' },
      });
      const ticketId = body.data.id;
      await services.agents.createAgent({
        email: 'ops@operator.test',
        name: 'Ops',
        password: 'correct horse battery staple',
        actor: CLI_ACTOR,
      });
      await services.stop();
      await storage.close();

      const replied = (await runLocally(config, 'tickets reply', {
        id: ticketId,
        agent: 'ops@operator.test',
        text: 'Looking now.',
        internal: false,
      })) as { comment: { id: string } };
      assert.match(replied.comment.id, /^cmt_/);
      const solved = (await runLocally(config, 'tickets status', {
        id: ticketId,
        agent: 'ops@operator.test',
        status: 'solved',
      })) as { status: string };
      assert.equal(solved.status, 'solved');

      const after = await openStorage(storageTargetFor(config));
      const reader = createServices({ config, storage: after, logger: createLogger('silent') });
      t.after(async () => {
        await reader.stop();
        await after.close();
      });
      const deliveries = await reader.webhooks.recentDeliveries(portalId);
      assert.deepEqual(
        deliveries.map((d) => [d.eventType, d.status]).sort(),
        [
          ['ticket.comment_added', 'pending'],
          ['ticket.updated', 'pending'],
          ['ticket.updated', 'pending'],
        ],
        'each change queued its events',
      );
    });
  });
}
