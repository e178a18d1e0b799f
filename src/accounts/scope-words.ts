/**
 * The scope catalog in plain words, for people: the settings page shows these with the scope's
 * identifier beside them in small print. One entry per scope of `scopes.ts` (the type makes a
 * missing one a compile error).
 *
 * @see docs/api-tokens.md "Scopes"
 */
import type { Scope } from './scopes.ts';

export const SCOPE_WORDS: Readonly<Record<Scope, string>> = {
  'messaging:send': 'Send messages',
  'messaging:credit:read': 'See the messaging credit balance',
  'messaging:numbers:read': 'See the sending phone numbers',
  'messaging:reports:read': 'Read delivery reports',
  'messaging:drafts:read': 'Read message drafts',
  'messaging:drafts:write': 'Create and change message drafts',
  'crm:contacts:read': 'Read contacts',
  'crm:contacts:write': 'Create, change, import and erase contacts',
  'support:tickets:read': 'Read support tickets',
  'support:tickets:write': 'Open support tickets',
};

/** The plain words of a scope; an unknown name (never stored, but defensive) is shown as is. */
export function scopeWords(scope: string): string {
  return Object.hasOwn(SCOPE_WORDS, scope) ? SCOPE_WORDS[scope as Scope] : scope;
}
