/**
 * The commands for users (the members of a portal), the encryption keys and the audit log:
 * `user create|invite|list|set-password|sign-out|role|disable|enable|remove`, `audit list` (the
 * keys' commands are in keys-commands.ts).
 *
 * @see docs/reference/cli.md
 */
import { Type } from 'typebox';
import { UsageError } from '../platform/errors.ts';
import type { Services } from '../services.ts';
import { auditLog, cliActor, defineCommand, Portal, portalOption, wholeNumber } from './command.ts';
import { readNewPassword } from './password.ts';

const Email = Type.String({ maxLength: 1000 });
const emailOption = { value: '<email>', description: 'email address of the user' };
const Role = Type.String({ maxLength: 20 });
const roleOption = {
  value: '<role>',
  description: 'admin (everything) or agent (the inbox and contacts only)',
};

/** The portal's id and the id of its member with this email. @throws UsageError not_found. */
async function memberOf(services: Services, portalCode: string, email: string) {
  const portalId = await services.accounts.portalIdFor(portalCode);
  const wanted = email.trim().toLowerCase();
  const member = (await services.team.listMembers(portalId)).find((m) => m.email === wanted);
  if (!member) throw new UsageError(`Portal ${portalCode} has no user ${wanted}.`, 'not_found');
  return { portalId, userId: member.userId, actor: await cliActor() };
}

/** "Ended 2 sessions." in plain words. */
const signedOutWords = (n: number) =>
  n === 0 ? 'No session was open.' : `Ended ${n} session${n === 1 ? '' : 's'}.`;

export const userCreate = defineCommand({
  name: 'user create',
  description: 'add a user to a portal',
  args: Type.Object({
    portal: Portal,
    email: Email,
    mainAdmin: Type.Boolean(),
    role: Type.Optional(Role),
  }),
  options: {
    portal: portalOption,
    email: { value: '<email>', description: 'email address (unique)' },
    mainAdmin: { description: 'make the user the main administrator (one per portal)' },
    role: { ...roleOption, description: `${roleOption.description}; default agent` },
  },
  run: (services, a) =>
    services.accounts.createUser({
      portalCode: a.portal,
      email: a.email,
      mainAdmin: a.mainAdmin,
      role: a.role,
    }),
  print: (u) =>
    `User ${u.userId} (${u.email}) created as ${u.isMainAdmin ? 'main administrator' : u.role}.`,
});

export const userInvite = defineCommand({
  name: 'user invite',
  description:
    'invite a person to a portal: prints a one-time link (valid 7 days) where they set a ' +
    'password; inviting a pending email again replaces its link',
  args: Type.Object({ portal: Portal, email: Email, role: Role }),
  options: {
    portal: portalOption,
    email: { value: '<email>', description: 'email address of the person (unique)' },
    role: roleOption,
  },
  run: async (services, a) => {
    const made = await services.team.invite({
      portalId: await services.accounts.portalIdFor(a.portal),
      email: a.email,
      role: a.role,
      actor: await cliActor(),
    });
    return {
      userId: made.userId,
      email: made.email,
      role: made.role,
      link: `${services.config.APP_BASE_URL}/invite/${made.token}`,
      expiresAt: made.expiresAt.toISOString(),
    };
  },
  print: (i) =>
    `Invited ${i.email} as ${i.role} (user ${i.userId}). Send them this link; it works once, ` +
    `until ${i.expiresAt}:\n${i.link}`,
});

export const userList = defineCommand({
  name: 'user list',
  description:
    'list the members of a portal: id, email, role, status (invited, active, disabled) and ' +
    'availability',
  args: Type.Object({ portal: Portal }),
  options: { portal: portalOption },
  run: async (services, a) =>
    services.team.listMembers(await services.accounts.portalIdFor(a.portal)),
  print: (members) =>
    members
      .map((m) =>
        [
          m.userId,
          m.email,
          m.isMainAdmin ? 'main administrator' : m.role,
          m.status,
          m.availability,
        ].join('  '),
      )
      .join('\n'),
});

export const userRole = defineCommand({
  name: 'user role',
  description: 'make a member an admin or an agent (never the last active admin an agent)',
  args: Type.Object({ portal: Portal, email: Email, role: Role }),
  options: { portal: portalOption, email: emailOption, role: roleOption },
  run: async (services, a) => {
    const m = await memberOf(services, a.portal, a.email);
    return services.team.setRole({ ...m, role: a.role });
  },
  print: (m) => `${m.email} is now ${m.role === 'admin' ? 'an admin' : 'an agent'}.`,
});

export const userDisable = defineCommand({
  name: 'user disable',
  description: 'stop a member signing in; every session of theirs ends at once',
  args: Type.Object({ portal: Portal, email: Email }),
  options: { portal: portalOption, email: emailOption },
  run: async (services, a) => services.team.disable(await memberOf(services, a.portal, a.email)),
  print: (u) => `${u.email} is disabled. ${signedOutWords(u.endedSessions)}`,
});

export const userEnable = defineCommand({
  name: 'user enable',
  description: 'let a disabled member sign in again',
  args: Type.Object({ portal: Portal, email: Email }),
  options: { portal: portalOption, email: emailOption },
  run: async (services, a) => services.team.enable(await memberOf(services, a.portal, a.email)),
  print: (u) => `${u.email} can sign in again.`,
});

export const userRemove = defineCommand({
  name: 'user remove',
  description: 'remove a member from a portal (their account and sessions are deleted)',
  args: Type.Object({ portal: Portal, email: Email }),
  options: { portal: portalOption, email: emailOption },
  run: async (services, a) => services.team.remove(await memberOf(services, a.portal, a.email)),
  print: (u) => `${u.email} is removed. ${signedOutWords(u.endedSessions)}`,
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
