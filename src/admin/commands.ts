/**
 * Operator commands, defined once. The CLI runs them either in its own process (when it can
 * open the storage) or hands them to the running server over the admin socket; both paths
 * call the same `run` with the same arguments and print the same result.
 *
 * Each command's `args` schema is checked on both paths, so a command cannot be called with
 * arguments the CLI would not have produced.
 */
import { Type, type Static, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { listPortals } from '../accounts/accounts-repository.ts';
import { CLI_ACTOR, listAuditEvents } from '../audit/audit-log.ts';
import { IMPORT_MAX } from '../contacts/contact-schemas.ts';
import { UsageError } from '../platform/errors.ts';
import { validationDetails } from '../platform/validation-messages.ts';
import type { Services } from '../services.ts';
import { SUPPORT_COMMANDS } from './support-commands.ts';
import { WEBHOOK_COMMANDS } from './webhook-commands.ts';

export interface Command<S extends TSchema = TSchema> {
  args: S;
  run(services: Services, args: Static<S>): Promise<unknown>;
}

function command<S extends TSchema>(
  args: S,
  run: (services: Services, args: Static<S>) => Promise<unknown>,
): Command {
  return { args, run };
}

const Portal = Type.String({ minLength: 1, maxLength: 32 });
const Scopes = Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50 });

/** Every command the admin surface knows, by its CLI name. */
export const COMMANDS: Record<string, Command> = {
  migrate: command(Type.Object({}), async (services) => {
    await services.storage.migrate();
    return { migrated: true };
  }),
  'portal create': command(
    Type.Object({
      name: Type.String({ maxLength: 1000 }),
      adminEmail: Type.String({ maxLength: 1000 }),
      code: Type.Optional(Portal),
      scopes: Type.Optional(Scopes),
    }),
    async (services, a) => {
      const created = await services.accounts.createPortal({ ...a, actor: CLI_ACTOR });
      return {
        portalCode: created.portalCode,
        userId: created.userId,
        token: created.token,
        scopes: created.scopes,
      };
    },
  ),
  'portal show': command(Type.Object({ portal: Portal }), (services, a) =>
    services.accounts.showPortal(a.portal),
  ),
  'portal list': command(Type.Object({}), (services) => listPortals(services.storage.db)),
  'user list': command(
    Type.Object({ portal: Portal }),
    async (services, a) => (await services.accounts.showPortal(a.portal)).users,
  ),
  'token regenerate': command(Type.Object({ portal: Portal }), async (services, a) => {
    const { token } = await services.accounts.regenerateToken({
      portalCode: a.portal,
      actor: CLI_ACTOR,
    });
    return { token };
  }),
  'token scopes': command(Type.Object({ portal: Portal, set: Scopes }), (services, a) =>
    services.accounts.setTokenScopes({ portalCode: a.portal, scopes: a.set, actor: CLI_ACTOR }),
  ),
  'user create': command(
    Type.Object({
      portal: Portal,
      email: Type.String({ maxLength: 1000 }),
      mainAdmin: Type.Boolean(),
    }),
    (services, a) =>
      services.accounts.createUser({
        portalCode: a.portal,
        email: a.email,
        mainAdmin: a.mainAdmin,
      }),
  ),
  'user set-password': command(
    Type.Object({
      portal: Portal,
      email: Type.String({ maxLength: 1000 }),
      password: Type.String({ maxLength: 1024 }),
    }),
    (services, a) =>
      services.accounts.setPassword({ portalCode: a.portal, email: a.email, password: a.password }),
  ),
  'user sign-out': command(
    Type.Object({ portal: Portal, email: Type.String({ maxLength: 1000 }) }),
    (services, a) => services.accounts.signOutUser({ portalCode: a.portal, email: a.email }),
  ),
  'keys rotate': command(Type.Object({}), (services) => services.partner.rotateKeys(CLI_ACTOR)),
  'contacts list': command(
    Type.Object({
      portal: Portal,
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
      cursor: Type.Optional(Type.String({ maxLength: 200 })),
      q: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
      tag: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
    }),
    async (services, { portal, limit, ...filters }) => {
      const portalId = await services.accounts.portalIdFor(portal);
      return services.contacts.listContacts({ portalId }, { limit: limit ?? 50, ...filters });
    },
  ),
  // One batch of the CLI's import (it reads the file and sends 1,000 rows at a time).
  'contacts import': command(
    Type.Object({
      portal: Portal,
      contacts: Type.Array(Type.Unknown(), { minItems: 1, maxItems: IMPORT_MAX }),
    }),
    async (services, a) => {
      const portalId = await services.accounts.portalIdFor(a.portal);
      return services.contacts.importContacts({ portalId }, a.contacts, 'import');
    },
  ),
  'credit add': command(
    Type.Object({
      portal: Portal,
      // NaN (a non-integer on the command line) fails here: "amount must be integer".
      amount: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
      note: Type.String({ minLength: 1, maxLength: 500 }),
    }),
    async (services, a) => {
      const portalId = await services.accounts.portalIdFor(a.portal);
      return services.messaging.addCredit({
        portalId,
        amount: a.amount,
        note: a.note,
        actor: CLI_ACTOR,
      });
    },
  ),
  'audit list': command(
    Type.Object({
      portal: Portal,
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
    }),
    async (services, a) => {
      const portalId = await services.accounts.portalIdFor(a.portal);
      return listAuditEvents(
        services.storage.db,
        portalId,
        a.limit === undefined ? {} : { limit: a.limit },
      );
    },
  ),
  ...WEBHOOK_COMMANDS,
  ...SUPPORT_COMMANDS,
};

/**
 * Run a command by name.
 *
 * @throws UsageError for an unknown command or arguments that do not fit its schema, and
 *   whatever UsageError the command itself raises.
 */
export async function runCommand(
  services: Services,
  name: string,
  args: unknown,
): Promise<unknown> {
  const cmd = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!cmd) throw new UsageError(`Unknown command: ${name}`);
  if (!Value.Check(cmd.args, args)) {
    // In the CLI's words: `limit` is the option `--limit`.
    const problems = validationDetails([...Value.Errors(cmd.args, args)], '').map(
      (d) => `--${d.field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} ${d.message}`,
    );
    throw new UsageError(`${name}: ${problems.join('; ')}.`);
  }
  return cmd.run(services, args);
}
