/**
 * The commands for the database, portals and their API token: `migrate`, `portal create|show|
 * list`, `token regenerate|scopes`, and `scopes` (the catalog, no storage needed).
 *
 * @see docs/reference/cli.md
 */
import { Type } from 'typebox';
import type { PortalSummary } from '../accounts/accounts-service.ts';
import { SCOPES, SCOPE_WORDS } from '../accounts/scopes.ts';
import { UsageError } from '../platform/errors.ts';
import { cliActor, defineCommand, list, Portal, portalOption } from './command.ts';

const Scopes = Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50 });

export const migrate = defineCommand({
  name: 'migrate',
  description: 'apply database migrations (the server also applies them at start)',
  args: Type.Object({}),
  options: {},
  createsStorage: true,
  run: async (services) => {
    await services.storage.migrate();
    return { migrated: true };
  },
  print: () => 'Migrations applied.',
});

export const portalCreate = defineCommand({
  name: 'portal create',
  description: 'create a portal, its main administrator and its API token (printed once)',
  args: Type.Object({
    name: Type.String({ maxLength: 1000 }),
    adminEmail: Type.String({ maxLength: 1000 }),
    code: Type.Optional(Portal),
    scopes: Type.Optional(Scopes),
  }),
  options: {
    name: { value: '<name>', description: 'display name of the portal' },
    adminEmail: { value: '<email>', description: 'email of the main administrator' },
    code: { value: '<digits>', description: 'portal code (default: random 8 digits)' },
    scopes: { value: '<a,b,..>', description: 'token scopes (default: all)', parse: list },
  },
  createsStorage: true,
  run: async (services, a) => {
    const created = await services.accounts.createPortal({ ...a, actor: await cliActor() });
    return {
      portalCode: created.portalCode,
      userId: created.userId,
      token: created.token,
      scopes: created.scopes,
    };
  },
  print: (c) =>
    [
      `Portal ${c.portalCode} created; main administrator is user ${c.userId}.`,
      `API token (shown once, store it now): ${c.token}`,
      `Scopes: ${c.scopes.join(', ')}`,
    ].join('\n'),
});

export const portalShow = defineCommand({
  name: 'portal show',
  description: 'show a portal, its users and its token hint (never the token)',
  args: Type.Object({ portal: Portal }),
  options: { portal: portalOption },
  run: (services, a): Promise<PortalSummary> => services.accounts.showPortal(a.portal),
  print: (p) => {
    const lines = [`Portal ${p.portalCode}: ${p.name} (created ${p.createdAt})`, 'Users:'];
    for (const u of p.users)
      lines.push(`  ${u.userId}  ${u.email}${u.isMainAdmin ? '  (main administrator)' : ''}`);
    lines.push(
      p.token
        ? `API token: …${p.token.hint}, owner user ${p.token.ownerUserId}, issued ${p.token.createdAt}\nScopes: ${p.token.scopes.join(', ')}`
        : 'API token: none',
    );
    return lines.join('\n');
  },
});

export const portalList = defineCommand({
  name: 'portal list',
  description: 'list every portal: code, name, users, created',
  args: Type.Object({}),
  options: {},
  run: async (services) =>
    (await import('../accounts/accounts-repository.ts')).listPortals(services.storage.db),
  print: (portals, { storage }) => {
    if (portals.length === 0) return `No portals in ${storage()}.`;
    return portals
      .map(
        (p) =>
          `${p.portalCode}  ${p.name}  (${p.users} user${p.users === 1 ? '' : 's'}, created ${p.createdAt})`,
      )
      .join('\n');
  },
});

export const tokenRegenerate = defineCommand({
  name: 'token regenerate',
  description: 'replace the token (printed once); the old one stops working at once',
  args: Type.Object({ portal: Portal }),
  options: { portal: portalOption },
  run: async (services, a) => {
    const { token } = await services.accounts.regenerateToken({
      portalCode: a.portal,
      actor: await cliActor(),
    });
    return { token };
  },
  print: (r) =>
    `New API token (shown once, store it now): ${r.token}\nThe previous token no longer works.`,
});

export const tokenScopes = defineCommand({
  name: 'token scopes',
  description: 'set the scopes of the token',
  args: Type.Object({ portal: Portal, set: Scopes }),
  options: {
    portal: portalOption,
    set: { value: '<a,b,..>', description: 'the complete list of scopes', parse: list },
  },
  run: async (services, a) =>
    services.accounts.setTokenScopes({
      portalCode: a.portal,
      scopes: a.set,
      actor: await cliActor(),
    }),
  print: (r) => `Scopes of portal ${r.portalCode}: ${r.scopes.join(', ')}`,
});

/** The scope catalog, in words. */
const scopeCatalog = async () =>
  SCOPES.map((scope) => ({ scope, description: SCOPE_WORDS[scope] }));

export const scopes = defineCommand({
  name: 'scopes',
  description: 'list the scopes an API token can carry, and what each allows',
  args: Type.Object({}),
  options: {},
  // Needs no storage: answered here, never sent.
  send: scopeCatalog,
  run: scopeCatalog,
  print: (catalog) => {
    const width = Math.max(...catalog.map((c) => c.scope.length));
    return catalog.map((c) => `${c.scope.padEnd(width)}  ${c.description}`).join('\n');
  },
});

export const dbDump = defineCommand({
  name: 'db dump',
  description:
    'write the embedded database as one SQL script for psql (docs/how-to/move-to-postgresql.md)',
  args: Type.Object({ out: Type.String({ minLength: 1, maxLength: 4096 }) }),
  options: { out: { value: '<file>', description: 'where to write the script' } },
  run: async (services, a) => {
    const pglite = services.storage.pglite;
    if (!pglite) throw new UsageError('db dump reads the embedded database; DATABASE_URL is set.');
    const { dumpDatabase } = await import('../db/dump.ts');
    const script = await dumpDatabase(pglite);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(a.out, script, { mode: 0o600 });
    return { out: a.out, bytes: Buffer.byteLength(script) };
  },
  print: (r) => `Wrote ${r.bytes} bytes of SQL to ${r.out}.`,
});
