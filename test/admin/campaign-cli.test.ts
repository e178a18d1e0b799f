/**
 * The `campaign` commands as an operator runs them, against a portal connected to the sandbox
 * provider over real HTTP: create (options and a JSON file), show, start (the cost confirmation
 * refused, then accepted), pause, resume, cancel, list; bad input refused with one clear line and
 * its exit status, nothing stored. On the embedded database the CLI first opens the data
 * directory itself, then hands the commands to a running server's admin socket; on PostgreSQL
 * (TEST_DATABASE_URL) it runs them against the database.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { parseConfig } from '../../src/config.ts';
import { openStorage, storageTargetFor } from '../../src/db/client.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createServices } from '../../src/services.ts';
import { createPortal } from '../helpers/app.ts';
import { connectPortal, startTestProvider } from '../helpers/provider.ts';
import { runCli, startServer, tempDataDir, type CliResult } from '../helpers/spawn.ts';
import { createPostgresDatabase } from '../helpers/storage.ts';

const CODE = '8301';

interface CampaignJson {
  id: string;
  status: string;
  template: { parameters?: unknown[] };
  audience: Record<string, unknown>;
  counts: { recipients: number; skipped: number };
  skippedBy: Record<string, number>;
  cost: { estimated: number | null; currency: string | null };
}

/**
 * A portal (code 8301) connected through a sandbox provider, with the `greeting` template
 * approved, three `vip` contacts (one opted out) and credit, made in this process on the storage
 * the CLI then uses. Returns the CLI's environment and the sender number.
 */
async function seed(t: TestContext, storageEnv: Record<string, string>) {
  const provider = await startTestProvider(t);
  const env = {
    ...provider.env,
    ...storageEnv,
    TOKEN_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    PROVIDER_HEALTH_CHECK_INTERVAL_MS: '0',
  };
  const config = parseConfig({ NODE_ENV: 'test', ...env });
  const storage = await openStorage(storageTargetFor(config));
  try {
    await storage.migrate();
    const services = createServices({ config, storage, logger: createLogger('silent') });
    try {
      const portal = await createPortal(services, { code: CODE });
      const portalId = await services.accounts.portalIdFor(CODE);
      await connectPortal(services, provider, { portalId, userId: portal.userId });
      for (const wabaId of await services.partner.wabaIdsOf(portalId))
        provider.sandbox.cloud.templatesOf(wabaId).push({
          id: `${wabaId}7`,
          name: 'greeting',
          language: 'en_US',
          category: 'UTILITY',
          status: 'APPROVED',
          components: [{ type: 'BODY', text: 'Hello {{1}}, thank you for your order.' }],
          appId: undefined,
        });
      const imported = await services.contacts.importContacts(
        { portalId },
        [
          {
            phone: '+16505550101',
            firstName: 'Ada',
            tags: ['vip'],
            consent: { whatsapp: 'opted_in' },
          },
          { phone: '+16505550102', tags: ['vip'] },
          { phone: '+16505550103', tags: ['vip'], consent: { whatsapp: 'opted_out' } },
        ],
        'import',
      );
      assert.equal(imported.failed.length, 0, JSON.stringify(imported.failed));
      await services.messaging.addCredit({
        portalId,
        amount: 1000,
        note: 'test',
        actor: CLI_ACTOR,
      });
      const [number] = await services.messagingProvider.numbers(portalId);
      return { env, from: number!.id };
    } finally {
      await services.stop();
    }
  } finally {
    await storage.close();
  }
}

const json = (res: CliResult): CampaignJson => {
  assert.equal(res.code, 0, res.stderr);
  return JSON.parse(res.stdout) as CampaignJson;
};

/** The whole life of two campaigns; `server` runs from the pause on (admin socket). */
async function campaignLife(
  t: TestContext,
  env: Record<string, string>,
  from: string,
  server?: () => Promise<unknown>,
) {
  const cli = (...args: string[]) => runCli(t, ['campaign', ...args, '--portal', CODE], env);
  const base = ['create', '--name', 'November offers', '--from', from];
  const template = ['--template', 'greeting', '--language', 'en_US'];

  // Bad input: one clear line, its exit status, nothing stored.
  const refusals: [string[], number, RegExp][] = [
    [[...base, ...template], 1, /give exactly one audience: --tag, --contacts or --all/],
    [[...base, ...template, '--tag', 'vip', '--all'], 1, /exactly one audience/],
    [['create', '--name', 'x', '--tag', 'vip'], 1, /give --from, --template, --language/],
    [[...base, ...template, '--tag', 'vip', '--pace', '5000'], 1, /--pace must be at most 1000/],
    [[...base, ...template, '--tag', 'vip', '--pace', 'fast'], 1, /--pace must be a whole number/],
    [[...base, ...template, '--tag', 'vip', '--schedule-at', 'tomorrow'], 2, /ISO 8601 time/],
    [
      [...base, ...template, '--tag', 'vip', '--schedule-at', '2020-01-01T00:00:00Z'],
      1,
      /The schedule 2020-01-01T00:00:00\.000Z is in the past/,
    ],
    [[...base, ...template, '--tag', 'nobody'], 1, /The audience has no contact/],
    [
      [...base, '--template', 'no_such', '--language', 'en_US', '--tag', 'vip'],
      1,
      /The template "no_such" \(en_US\) is not found/,
    ],
    [[...base, '--template', 'Bad Name', '--language', 'en_US', '--tag', 'vip'], 1, /--template/],
  ];
  for (const [args, exit, message] of refusals) {
    const res = await cli(...args);
    assert.equal(res.code, exit, `${args.join(' ')}: ${res.stdout}${res.stderr}`);
    assert.match(res.stderr, /^error: .+\n(\(add --help for usage\)\n)?$/, args.join(' '));
    assert.match(res.stderr, message, args.join(' '));
  }
  assert.equal((await cli('list')).stdout, 'No campaigns.\n', 'nothing stored');

  const created = await cli(
    ...base,
    ...template,
    '--parameter',
    'contact:firstName|there',
    '--tag',
    'vip',
    '--pace',
    '20',
  );
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stdout, /^Campaign created \(draft\):\ncmp_\w+ {2}November offers {2}draft/);
  assert.match(created.stdout, /to contacts tagged vip, 20 per second/);
  const id = /cmp_\w+/.exec(created.stdout)![0];

  const shown = json(await cli('show', id, '--json'));
  assert.deepEqual(
    [shown.status, shown.template.parameters, shown.audience],
    ['draft', [{ contact: 'firstName', fallback: 'there' }], { tag: 'vip' }],
  );

  // The estimate accepted is lower than the real one: refused, still a draft.
  const dear = await cli('start', id, '--confirm-cost', '0');
  assert.equal(dear.code, 1, dear.stderr);
  assert.match(dear.stderr, /^error: /);
  assert.equal(json(await cli('show', id, '--json')).status, 'draft');

  const started = await cli('start', id);
  assert.equal(started.code, 0, started.stderr);
  assert.match(started.stdout, /^Started:\n/);
  assert.match(started.stdout, /Recipients 2, skipped 1 \(opted_out 1\)/);
  assert.match(started.stdout, /Cost: estimated \d+\.\d+ EUR \(\d+ minor units\)/);

  const paused = await cli('pause', id);
  assert.equal(paused.code, 0, paused.stderr);
  assert.match(paused.stdout, /^Paused:\ncmp_\w+ {2}November offers {2}paused/);
  const again = await cli('pause', id);
  assert.equal(again.code, 1, again.stderr);
  assert.match(again.stderr, /^error: A paused campaign cannot be paused\.\n$/);

  await server?.();

  assert.equal(json(await cli('resume', id, '--json')).status, 'running');
  const missing = await cli('show', 'cmp_nosuch');
  assert.equal(missing.code, 1, missing.stderr);
  assert.match(missing.stderr, /No such campaign/);

  // From a JSON file, as the API takes it; scheduled, so its start waits for the time.
  const file = join(tempDataDir(), 'campaign.json');
  const at = new Date(Date.now() + 86_400_000).toISOString();
  writeFileSync(
    file,
    JSON.stringify({
      name: 'Later',
      from,
      template: { name: 'greeting', language: 'en_US', parameters: ['friend'] },
      audience: { all: true },
      schedule: { at },
    }),
  );
  const both = await cli('create', '--file', file, '--name', 'x');
  assert.equal(both.code, 1, both.stderr);
  assert.match(both.stderr, /either --file or the campaign options/);
  const fromFile = json(await cli('create', '--file', file, '--json'));
  assert.deepEqual([fromFile.status, fromFile.audience], ['draft', { all: true }]);
  const scheduled = await cli('start', fromFile.id);
  assert.equal(scheduled.code, 0, scheduled.stderr);
  assert.match(scheduled.stdout, new RegExp(`^Scheduled for ${at}:`));
  const cancelled = await cli('cancel', fromFile.id);
  assert.equal(cancelled.code, 0, cancelled.stderr);
  assert.match(cancelled.stdout, /^Cancelled:\n.+cancelled\n/);
  const twice = await cli('cancel', fromFile.id);
  assert.equal(twice.code, 1, twice.stderr);
  assert.match(twice.stderr, /^error: A cancelled campaign cannot be cancelled\.\n$/);
  writeFileSync(file, JSON.stringify({ name: 'Broken', from, audience: { all: true } }));
  const broken = await cli('create', '--file', file);
  assert.equal(broken.code, 1, broken.stderr);
  assert.match(broken.stderr, /campaign create \(.+campaign\.json\): template /);

  const list = await cli('list');
  assert.equal(list.code, 0, list.stderr);
  assert.match(
    list.stdout,
    new RegExp(`^${fromFile.id} {2}cancelled .+Later\n${id} {2}(running|completed) `),
  );
  const onlyCancelled = await runCli(
    t,
    ['campaign', 'list', '--portal', CODE, '--status', 'cancelled', '--json'],
    env,
  );
  const page = JSON.parse(onlyCancelled.stdout) as { items: { id: string }[] };
  assert.deepEqual(
    page.items.map((c) => c.id),
    [fromFile.id],
  );

  const audit = await runCli(t, ['audit', 'list', '--portal', CODE, '--json'], env);
  const moves = (
    JSON.parse(audit.stdout) as { action: string; actorType: string; actorId: string }[]
  )
    .filter((e) => e.action.startsWith('campaign.') && e.actorId !== 'campaign-runner')
    .map((e) => `${e.action} ${e.actorType}:${e.actorId}`)
    .sort();
  assert.deepEqual(moves, [
    'campaign.cancelled system:cli',
    'campaign.created system:cli',
    'campaign.created system:cli',
    'campaign.paused system:cli',
    'campaign.resumed system:cli',
    'campaign.scheduled system:cli',
    'campaign.started system:cli',
  ]);
}

describe('admin CLI: campaign', () => {
  test('embedded database: the CLI itself, then through the running server', async (t) => {
    const { env, from } = await seed(t, { DATA_DIR: tempDataDir() });
    await campaignLife(t, env, from, () => startServer(t, env));
  });

  test('PostgreSQL', async (t) => {
    if (!process.env.TEST_DATABASE_URL) return t.skip('TEST_DATABASE_URL is not set');
    const database = await createPostgresDatabase();
    t.after(database.drop);
    const { env, from } = await seed(t, { DATABASE_URL: database.url });
    await campaignLife(t, env, from);
  });
});
