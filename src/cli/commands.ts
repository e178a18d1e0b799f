/**
 * The table of operator commands, in the order `--help` lists them: the one source of the CLI's
 * program, the admin socket and docs/reference/cli.md. The CLI runs a command either in its own process
 * (when it can open the storage) or hands it to the running server over the admin socket; both
 * paths call `runCommand` with the same arguments.
 *
 * @see docs/reference/cli.md
 */
import { Value } from 'typebox/value';
import { UsageError } from '../platform/errors.ts';
import { validationDetails } from '../platform/validation-messages.ts';
import type { Services } from '../services.ts';
import { flagOf, type AdminCommand } from './command.ts';
import {
  campaignCancel,
  campaignCreate,
  campaignList,
  campaignPause,
  campaignResume,
  campaignShow,
  campaignStart,
} from './campaign-commands.ts';
import { contactsImport, contactsList } from './contacts-commands.ts';
import {
  creditAdd,
  webhookAdd,
  webhookList,
  webhookRemove,
  webhookRotateSecret,
  webhookTest,
} from './messaging-commands.ts';
import {
  dbDump,
  migrate,
  portalCreate,
  portalList,
  portalShow,
  scopes,
  tokenRegenerate,
  tokenScopes,
} from './portal-commands.ts';
import {
  agentCreate,
  agentDisable,
  agentList,
  ticketsList,
  ticketsReply,
  ticketsShow,
  ticketsStatus,
} from './support-commands.ts';
import { tasksList } from './tasks-commands.ts';
import { keysCheck, keysRotate } from './keys-commands.ts';
import { keyCreate, keyList, keyRevoke, keyRotate } from './api-key-commands.ts';
import { partnerOnboard } from './partner-commands.ts';
import {
  auditList,
  userCreate,
  userDisable,
  userEnable,
  userInvite,
  userList,
  userRemove,
  userRole,
  userSetPassword,
  userSignOut,
} from './user-commands.ts';

/** The groups of two-word commands (`portal create`), described in `--help`. */
export const GROUPS: Record<string, string> = {
  db: 'the embedded database',
  portal: 'portals (tenants)',
  token: 'the API token of a portal',
  key: "a portal's API keys (scopes, expiry, allowed addresses)",
  user: 'the members of a portal (its team): roles, invitations, status',
  keys: 'the keys that seal provider tokens, secrets, message content and drafts at rest',
  partner: "a portal's provider connection",
  audit: 'the audit log of a portal',
  contacts: 'the CRM contacts of a portal',
  credit: "a portal's messaging credit",
  webhook: "a portal's outbound webhook endpoints",
  campaign: "a portal's campaigns: one approved template to an audience, at a pace",
  agent: "support agents (the operator's people)",
  tickets: "every portal's support tickets (the agents' side)",
  tasks:
    'the background work of the service: its periodic tasks, and the work that is not periodic',
};

/** Every command, in the order `--help` and docs/reference/cli.md list them. */
export const COMMANDS: readonly AdminCommand[] = [
  migrate,
  dbDump,
  portalCreate,
  portalShow,
  portalList,
  tokenRegenerate,
  tokenScopes,
  keyCreate,
  keyList,
  keyRotate,
  keyRevoke,
  scopes,
  userCreate,
  userInvite,
  userList,
  userSetPassword,
  userSignOut,
  userRole,
  userDisable,
  userEnable,
  userRemove,
  keysRotate,
  keysCheck,
  partnerOnboard,
  auditList,
  contactsList,
  contactsImport,
  creditAdd,
  webhookAdd,
  webhookList,
  webhookRemove,
  webhookRotateSecret,
  webhookTest,
  campaignCreate,
  campaignList,
  campaignShow,
  campaignStart,
  campaignPause,
  campaignResume,
  campaignCancel,
  agentCreate,
  agentList,
  agentDisable,
  ticketsList,
  ticketsShow,
  ticketsReply,
  ticketsStatus,
  tasksList,
];

const BY_NAME = new Map(COMMANDS.map((c) => [c.name, c]));

/**
 * The command called `name`.
 *
 * @throws UsageError for a name no command has.
 */
export function commandNamed(name: string): AdminCommand {
  const command = BY_NAME.get(name);
  if (!command) throw new UsageError(`Unknown command: ${name}`);
  return command;
}

/** In the CLI's words: `--amount must be at least 1` says it must be positive. */
function optionWords(message: string): string {
  return message === 'must be at least 1' ? 'must be a positive whole number' : message;
}

/**
 * Run a command by name, its arguments checked against its schema first.
 *
 * @throws UsageError for an unknown command or arguments that do not fit its schema (in the
 *   CLI's words: `limit` is the option `--limit`); whatever the command itself throws
 *   (UsageError, AppError).
 */
export async function runCommand(
  services: Services,
  name: string,
  args: unknown,
): Promise<unknown> {
  const command = commandNamed(name);
  if (!Value.Check(command.args, args)) {
    const problems = validationDetails([...Value.Errors(command.args, args)], '').map(
      (d) => `${flagOf(d.field)} ${optionWords(d.message)}`,
    );
    throw new UsageError(`${name}: ${problems.join('; ')}.`);
  }
  return command.run(services, args);
}
