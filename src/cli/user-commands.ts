/**
 * The commands for users, the encryption keys and the audit log: `user create|list|
 * set-password|sign-out`, `audit list` (the keys' commands are in keys-commands.ts).
 *
 * @see docs/reference/cli.md
 */
import { Type } from 'typebox';
import { auditLog, defineCommand, Portal, portalOption, wholeNumber } from './command.ts';
import { readNewPassword } from './password.ts';

const Email = Type.String({ maxLength: 1000 });
const emailOption = { value: '<email>', description: 'email address of the user' };

/** "Ended 2 sessions." in plain words. */
const signedOutWords = (n: number) =>
  n === 0 ? 'No session was open.' : `Ended ${n} session${n === 1 ? '' : 's'}.`;

export const userCreate = defineCommand({
  name: 'user create',
  description: 'add a user to a portal',
  args: Type.Object({ portal: Portal, email: Email, mainAdmin: Type.Boolean() }),
  options: {
    portal: portalOption,
    email: { value: '<email>', description: 'email address (unique)' },
    mainAdmin: { description: 'make the user the main administrator (one per portal)' },
  },
  run: (services, a) =>
    services.accounts.createUser({ portalCode: a.portal, email: a.email, mainAdmin: a.mainAdmin }),
  print: (u) =>
    `User ${u.userId} (${u.email}) created${u.isMainAdmin ? ' as main administrator' : ''}.`,
});

export const userList = defineCommand({
  name: 'user list',
  description: 'list the users of a portal',
  args: Type.Object({ portal: Portal }),
  options: { portal: portalOption },
  run: async (services, a) => (await services.accounts.showPortal(a.portal)).users,
  print: (users) =>
    users
      .map((u) => `${u.userId}  ${u.email}${u.isMainAdmin ? '  (main administrator)' : ''}`)
      .join('\n'),
});

export const userSetPassword = defineCommand({
  name: 'user set-password',
  description:
    'set the sign-in password of a user: typed twice at a terminal, or the first line of ' +
    'standard input when piped',
  args: Type.Object({
    portal: Portal,
    email: Email,
    password: Type.String({ maxLength: 1024 }),
  }),
  options: { portal: portalOption, email: emailOption },
  run: (services, a) =>
    services.accounts.setPassword({ portalCode: a.portal, email: a.email, password: a.password }),
  // Never an option: arguments are visible in the process list and kept in shell history.
  send: async (o, exec) =>
    exec({ portal: String(o.portal), email: String(o.email), password: await readNewPassword() }),
  print: (u) =>
    `Password set for ${u.email}; they can sign in at /login. ${signedOutWords(u.endedSessions)}`,
});

export const userSignOut = defineCommand({
  name: 'user sign-out',
  description: 'end every session of a user (every browser they are signed in on)',
  args: Type.Object({ portal: Portal, email: Email }),
  options: { portal: portalOption, email: emailOption },
  run: (services, a) => services.accounts.signOutUser({ portalCode: a.portal, email: a.email }),
  print: (u) => `${u.email}: ${signedOutWords(u.endedSessions)}`,
});

export const auditList = defineCommand({
  name: 'audit list',
  description: 'list audit events, newest first',
  args: Type.Object({
    portal: Portal,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
  }),
  options: {
    portal: portalOption,
    limit: {
      value: '<n>',
      description: 'how many events (1-500, default 50)',
      parse: wholeNumber(1, 500),
    },
  },
  run: async (services, a) => {
    const portalId = await services.accounts.portalIdFor(a.portal);
    return (await auditLog()).listAuditEvents(
      services.storage.db,
      portalId,
      a.limit === undefined ? {} : { limit: a.limit },
    );
  },
  print: (events) => {
    if (events.length === 0) return 'No audit events.';
    return events
      .map((e) =>
        [e.occurredAt, e.action, `${e.actorType}:${e.actorId}`, e.reason ?? '']
          .join('  ')
          .trimEnd(),
      )
      .join('\n');
  },
});
