/**
 * The audit log in the customer's words. The stored events are written for operators (the CLI
 * lists them as they are: `system cli`, "error 190", shell commands); a customer page says the
 * same facts as "Portico's administrator", "Portico's periodic check", and never a command,
 * an environment variable or a provider error number.
 *
 * @see docs/decisions/0009-pages.md
 */
import type { AuditEvent } from '../../audit/audit-log.ts';

/** What each action is called on the page. */
const ACTION_WORDS: Record<string, string> = {
  'api_token.created': 'API token created',
  'ticket.status_changed': 'Support ticket status changed',
  'ticket.assigned': 'Support ticket assigned',
  'conversation.assigned': 'Conversation reassigned',
  'api_token.regenerated': 'API token regenerated',
  'api_token.scopes_changed': 'API token permissions changed',
  'api_key.created': 'API key created',
  'api_key.rotated': 'API key rotated',
  'api_key.revoked': 'API key revoked',
  'api_key.refused': 'API key refused',
  'connection.created': 'Provider account connected',
  'connection.revoked': 'Provider account disconnected',
  'connection.cancelled': 'Connection attempt cancelled',
  'connection.declined': 'Connection attempt declined',
  'encryption_key.rotated': 'Encryption key rotated',
  'secret.redacted': 'Secret removed from a support ticket',
  'data_deletion.requested': 'Data deletion requested',
  'provider_callback.ignored': 'Provider notice ignored',
  'contact.erased': 'Contact erased',
  'messaging_settings.changed': 'Messaging settings changed',
  'member.invited': 'Team member invited',
  'member.joined': 'Team member joined',
  'member.role_changed': 'Team member role changed',
  'member.disabled': 'Team member disabled',
  'member.enabled': 'Team member enabled',
  'member.removed': 'Team member removed',
};

/** System actors (audit `actor_id` of type `system`) as customers know them. */
const SYSTEM_ACTOR_WORDS: Record<string, string> = {
  cli: "Portico's administrator",
  'health-checker': "Portico's periodic check",
  'provider-client': 'Portico',
  api: 'The Portico API',
};

export interface AuditWordsContext {
  /** Emails of the portal's users by id (string), to name user actors. */
  userEmails: ReadonlyMap<string, string>;
  /** The provider as the pages name it ("Meta"). */
  providerName: string;
  /** When the portal's current API token was issued (ISO 8601), null without one. */
  tokenIssuedAt: string | null;
}

export interface AuditRow {
  id: number;
  /** ISO 8601 UTC, for `<time datetime>`. */
  at: string;
  /** "2026-11-21 08:30 UTC". */
  when: string;
  what: string;
  who: string;
  why: string;
}

/** An ISO 8601 instant as people read it, in UTC and saying so: "2026-11-21 08:30 UTC". */
export function utcWords(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

function who(e: AuditEvent, ctx: AuditWordsContext): string {
  switch (e.actorType) {
    case 'user':
      return ctx.userEmails.get(e.actorId) ?? 'A former user of this portal';
    case 'provider':
      return ctx.providerName;
    case 'system':
      return SYSTEM_ACTOR_WORDS[e.actorId] ?? 'Portico';
    case 'agent':
      return 'Portico support';
  }
}

/** "regenerate it now (… `npm run cli -- token regenerate`)." in the stored reason. */
const REGENERATE_ADVICE = /regenerate it now\b[^.]*(\([^)]*\))?\.?/i;

/**
 * The reason in customer words: the advice to regenerate the token becomes "done" once the
 * current token was issued after the event; shell commands (in backticks), environment
 * variable names and provider error numbers are left out.
 */
export function customerReason(e: AuditEvent, ctx: AuditWordsContext): string {
  let text = e.reason ?? '';
  if (REGENERATE_ADVICE.test(text)) {
    const regeneratedSince = ctx.tokenIssuedAt !== null && ctx.tokenIssuedAt > e.occurredAt;
    text = text.replace(
      REGENERATE_ADVICE,
      regeneratedSince
        ? 'the token has been regenerated since, so nothing is left to do.'
        : 'regenerate it now with Regenerate token on the settings page.',
    );
  }
  text = text.replace(
    /The operator must rotate the app secret at the provider and update PROVIDER_APP_SECRET\./,
    "Portico's administrator changes the app secret; nothing to do on your side.",
  );
  return text
    .replace(/\s*\([^()]*`[^()]*\)/g, '') // a parenthesis holding a command
    .replace(/`[^`]*`/g, '') // any other command
    .replace(/\s*\((?:Graph )?error \d+(?:\/\d+)?\)/gi, '') // "(error 190)"
    .replace(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g, 'the configuration') // ENV_VAR names
    .replace(/\bthe provider\b/g, ctx.providerName)
    .replace(/\s{2,}/g, ' ')
    .trim();
}

/** The page's rows for `events`, in their order. */
export function auditRows(events: readonly AuditEvent[], ctx: AuditWordsContext): AuditRow[] {
  return events.map((e) => ({
    id: e.id,
    at: e.occurredAt,
    when: utcWords(e.occurredAt),
    what: ACTION_WORDS[e.action] ?? e.action.replace(/[._]/g, ' '),
    who: who(e, ctx),
    why: customerReason(e, ctx),
  }));
}
