/**
 * The scope catalog: the only permission names a token can carry.
 *
 * @see docs/reference/external-api.md
 */
import { UsageError } from '../platform/errors.ts';

export const SCOPES = [
  'messaging:send',
  'messaging:credit:read',
  'messaging:numbers:read',
  'messaging:reports:read',
  'messaging:drafts:read',
  'messaging:drafts:write',
  'messaging:conversations:write',
  'messaging:notes:read',
  'crm:contacts:read',
  'crm:contacts:write',
  'support:tickets:read',
  'support:tickets:write',
  'tokens:manage',
  'events:read',
] as const;

export type Scope = (typeof SCOPES)[number];

/**
 * What each scope lets a token do, in the words a person reads (`npm run cli -- scopes`, the
 * settings page, the API reference). Keys are the catalog, so a new scope needs its words.
 */
export const SCOPE_WORDS: Record<Scope, string> = {
  'messaging:send': 'Send messages',
  'messaging:credit:read': 'See the messaging credit balance',
  'messaging:numbers:read': 'See the phone numbers messages are sent from',
  'messaging:reports:read': 'See delivery reports',
  'messaging:drafts:read': 'See message drafts',
  'messaging:drafts:write': 'Create, change and delete message drafts',
  'messaging:conversations:write':
    "Change conversations' status, assignee and labels, and add private notes",
  'messaging:notes:read': 'See the private notes in conversations',
  'crm:contacts:read': 'See contacts',
  'crm:contacts:write': 'Create, change, import and erase contacts',
  'support:tickets:read': 'See support tickets',
  'support:tickets:write': 'Open support tickets',
  'tokens:manage': "Create, list, rotate and revoke the portal's API keys",
  'events:read':
    'See the event log and webhook delivery history, and replay events to your endpoints',
};

const KNOWN = new Set<string>(SCOPES);

export function isScope(value: string): value is Scope {
  return KNOWN.has(value);
}

/**
 * Validate a list of scope names, drop duplicates and return them in catalog order.
 *
 * @throws UsageError naming the unknown scopes and listing the valid ones; or when empty.
 */
export function parseScopes(names: readonly string[]): Scope[] {
  const unknown = names.filter((n) => !isScope(n));
  if (unknown.length > 0) {
    throw new UsageError(
      `Unknown scope${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}. ` +
        `Valid scopes: ${SCOPES.join(', ')}.`,
    );
  }
  const wanted = new Set(names);
  const scopes = SCOPES.filter((s) => wanted.has(s));
  if (scopes.length === 0) throw new UsageError(`Give at least one scope: ${SCOPES.join(', ')}.`);
  return scopes;
}

/** The plain words of a scope; an unknown name (never stored, but defensive) is shown as is. */
export function scopeWords(scope: string): string {
  return Object.hasOwn(SCOPE_WORDS, scope) ? SCOPE_WORDS[scope as Scope] : scope;
}
