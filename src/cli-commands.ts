/**
 * The commands of the admin CLI, one function per command group, added to the program in the
 * order `--help` lists them. Each command turns its options into the arguments of an admin
 * command (src/admin/commands.ts), runs it, and prints the result for a person or, with
 * `--json`, as JSON.
 */
import type { Command } from 'commander';
import type { PortalSummary } from './accounts/accounts-service.ts';
import { SCOPES, SCOPE_WORDS } from './accounts/scopes.ts';
import type { AuditEvent } from './audit/audit-log.ts';
import { action, json, list, portal, storageDescription, wholeNumber } from './cli-execute.ts';
import { readNewPassword } from './cli-password.ts';

// Where the contacts commands (and those added later) found these before cli-execute.ts.
export { action, execute, json, portal } from './cli-execute.ts';

/** `migrate`: apply database migrations. */
export function addMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description('apply database migrations (the server also applies them at start)')
    .addOption(json)
    .action(
      action(
        'migrate',
        () => ({}),
        () => 'Migrations applied.',
      ),
    );
}

/** `portal create`, `portal show`: portals (tenants). */
export function addPortalCommands(program: Command): void {
  const portalCmd = program.command('portal').description('portals (tenants)');
  portalCmd
    .command('create')
    .description('create a portal, its main administrator and its API token (printed once)')
    .requiredOption('--name <name>', 'display name of the portal')
    .requiredOption('--admin-email <email>', 'email of the main administrator')
    .option('--code <digits>', 'portal code (default: random 8 digits)')
    .option('--scopes <a,b,..>', 'token scopes (default: all)', list)
    .addOption(json)
    .action(
      action(
        'portal create',
        (o) => ({
          name: o.name,
          adminEmail: o.adminEmail,
          ...(o.code !== undefined && { code: o.code }),
          ...(o.scopes !== undefined && { scopes: o.scopes }),
        }),
        (r) => {
          const c = r as { portalCode: string; userId: number; token: string; scopes: string[] };
          return [
            `Portal ${c.portalCode} created; main administrator is user ${c.userId}.`,
            `API token (shown once, store it now): ${c.token}`,
            `Scopes: ${c.scopes.join(', ')}`,
          ].join('\n');
        },
      ),
    );
  portalCmd
    .command('show')
    .description('show a portal, its users and its token hint (never the token)')
    .requiredOption(...portal)
    .addOption(json)
    .action(
      action(
        'portal show',
        (o) => ({ portal: o.portal }),
        (r) => {
          const p = r as PortalSummary;
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
      ),
    );
  portalCmd
    .command('list')
    .description('list every portal: code, name, users, created')
    .addOption(json)
    .action(
      action(
        'portal list',
        () => ({}),
        (r, config) => {
          const portals = r as {
            portalCode: string;
            name: string;
            users: number;
            createdAt: string;
          }[];
          if (portals.length === 0) return `No portals in ${storageDescription(config)}.`;
          return portals
            .map(
              (p) =>
                `${p.portalCode}  ${p.name}  (${p.users} user${p.users === 1 ? '' : 's'}, created ${p.createdAt})`,
            )
            .join('\n');
        },
      ),
    );
}

/** `token regenerate`, `token scopes`: the API token of a portal. */
export function addTokenCommands(program: Command): void {
  const tokenCmd = program.command('token').description('the API token of a portal');
  tokenCmd
    .command('regenerate')
    .description('replace the token (printed once); the old one stops working at once')
    .requiredOption(...portal)
    .addOption(json)
    .action(
      action(
        'token regenerate',
        (o) => ({ portal: o.portal }),
        (r) =>
          `New API token (shown once, store it now): ${(r as { token: string }).token}\nThe previous token no longer works.`,
      ),
    );
  tokenCmd
    .command('scopes')
    .description('set the scopes of the token')
    .requiredOption(...portal)
    .requiredOption('--set <a,b,..>', 'the complete list of scopes', list)
    .addOption(json)
    .action(
      action(
        'token scopes',
        (o) => ({ portal: o.portal, set: o.set }),
        (r) =>
          `Scopes of portal ${(r as { portalCode: string }).portalCode}: ${(r as { scopes: string[] }).scopes.join(', ')}`,
      ),
    );
}

/** `user create`, `user set-password`, `user sign-out`: users of a portal. */
export function addUserCommands(program: Command): void {
  const userCmd = program.command('user').description('users of a portal');
  userCmd
    .command('create')
    .description('add a user to a portal')
    .requiredOption(...portal)
    .requiredOption('--email <email>', 'email address (unique)')
    .option('--main-admin', 'make the user the main administrator (one per portal)', false)
    .addOption(json)
    .action(
      action(
        'user create',
        (o) => ({ portal: o.portal, email: o.email, mainAdmin: o.mainAdmin === true }),
        (r) => {
          const u = r as { userId: number; email: string; isMainAdmin: boolean };
          return `User ${u.userId} (${u.email}) created${u.isMainAdmin ? ' as main administrator' : ''}.`;
        },
      ),
    );
  userCmd
    .command('list')
    .description('list the users of a portal')
    .requiredOption(...portal)
    .addOption(json)
    .action(
      action(
        'user list',
        (o) => ({ portal: o.portal }),
        (r) =>
          (r as PortalSummary['users'])
            .map((u) => `${u.userId}  ${u.email}${u.isMainAdmin ? '  (main administrator)' : ''}`)
            .join('\n'),
      ),
    );
  userCmd
    .command('set-password')
    .description(
      'set the sign-in password of a user: typed twice at a terminal, or the first line of ' +
        'standard input when piped',
    )
    .requiredOption(...portal)
    .requiredOption('--email <email>', 'email address of the user')
    .addOption(json)
    .action(async (opts: Record<string, unknown>) => {
      const password = await readNewPassword();
      await action(
        'user set-password',
        (o) => ({ portal: o.portal, email: o.email, password }),
        (r) => {
          const u = r as { email: string; endedSessions: number };
          return `Password set for ${u.email}; they can sign in at /login. ${signedOutWords(u.endedSessions)}`;
        },
      )(opts);
    });
  userCmd
    .command('sign-out')
    .description('end every session of a user (every browser they are signed in on)')
    .requiredOption(...portal)
    .requiredOption('--email <email>', 'email address of the user')
    .addOption(json)
    .action(
      action(
        'user sign-out',
        (o) => ({ portal: o.portal, email: o.email }),
        (r) => {
          const u = r as { email: string; endedSessions: number };
          return `${u.email}: ${signedOutWords(u.endedSessions)}`;
        },
      ),
    );
}

/** "Ended 2 sessions." in plain words. */
function signedOutWords(n: number): string {
  return n === 0 ? 'No session was open.' : `Ended ${n} session${n === 1 ? '' : 's'}.`;
}

/** `keys rotate`: re-encrypt provider tokens and webhook secrets under the active key. */
export function addKeysCommands(program: Command): void {
  program
    .command('keys')
    .description('the keys that encrypt provider tokens and webhook secrets at rest')
    .command('rotate')
    .description(
      're-encrypt every stored provider token and webhook signing secret under the first key of TOKEN_ENCRYPTION_KEYS (keep the old key listed until this has run)',
    )
    .addOption(json)
    .action(
      action(
        'keys rotate',
        () => ({}),
        (r) => {
          const k = r as {
            reencrypted: number;
            also: { what: string; count: number }[];
            activeKeyId: string;
          };
          const counts = [
            `${k.reencrypted} provider token(s)`,
            ...k.also.map((a) => `${a.count} ${a.what}`),
          ];
          return `Re-encrypted ${counts.join(' and ')} under key ${k.activeKeyId}.`;
        },
      ),
    );
}

/** `audit list`: the audit log of a portal. */
export function addAuditCommands(program: Command): void {
  program
    .command('audit')
    .description('the audit log of a portal')
    .command('list')
    .description('list audit events, newest first')
    .requiredOption(...portal)
    .option('--limit <n>', 'how many events (1-500, default 50)', wholeNumber(1, 500))
    .addOption(json)
    .action(
      action(
        'audit list',
        (o) => ({ portal: o.portal, ...(o.limit !== undefined && { limit: o.limit }) }),
        (r) => {
          const events = r as AuditEvent[];
          if (events.length === 0) return 'No audit events.';
          return events
            .map((e) =>
              [e.occurredAt, e.action, `${e.actorType}:${e.actorId}`, e.reason ?? '']
                .join('  ')
                .trimEnd(),
            )
            .join('\n');
        },
      ),
    );
}

/** `scopes`: the scope catalog, in words (no storage needed). */
export function addScopesCommand(program: Command): void {
  program
    .command('scopes')
    .description('list the scopes an API token can carry, and what each allows')
    .addOption(json)
    .action((opts: Record<string, unknown>) => {
      const catalog = SCOPES.map((scope) => ({ scope, description: SCOPE_WORDS[scope] }));
      const width = Math.max(...SCOPES.map((s) => s.length));
      process.stdout.write(
        opts.json
          ? `${JSON.stringify(catalog, null, 2)}\n`
          : `${catalog.map((c) => `${c.scope.padEnd(width)}  ${c.description}`).join('\n')}\n`,
      );
    });
}
