/**
 * What happens when a new ticket request carried secrets: every stored free-text field of the
 * ticket (subject, description, category, tags) and its `Idempotency-Key` go through the one
 * scanner (accounts/secret-scanner.ts); then the `secret.redacted` audit events that tell the
 * right portal or the operator what to do, and the one warn log line.
 *
 * Invariant: the secret itself never leaves this module's input; events and the log line carry
 * ticket ids, portal ids and counts only.
 *
 * @see docs/decisions/0005-idempotency.md
 */
import type { Principal } from '../accounts/principal.ts';
import { mergeFindings, type SecretScanner } from '../accounts/secret-scanner.ts';
import { recordAuditEvent, type Actor } from '../audit/audit-log.ts';
import { sha256Hex } from '../platform/crypto.ts';
import type { Logger } from '../platform/logger.ts';
import { portalsOwningTokens, type Tx } from './tickets-repository.ts';

/** The stored free-text fields of a ticket. */
export interface TicketText {
  subject: string;
  description: string;
  category: string | null;
  tags: string[];
}

/** A ticket request after redaction, and what was found anywhere in it. */
export interface RedactedTicket {
  /** The fields to store, every secret replaced by `[REDACTED]`. */
  text: TicketText;
  /** The `Idempotency-Key` to store and compare (see `storedIdempotencyKey`). */
  idempotencyKey: string | undefined;
  /** SHA-256 hex of each distinct Portico API token found, in order of first occurrence. */
  tokenHashes: string[];
  /** True when the provider app secret occurred anywhere in the request. */
  appSecretFound: boolean;
  /** True when anything was redacted (`secretRedacted` of the stored ticket). */
  secretRedacted: boolean;
}

/** How a key that held a secret is stored: this prefix and the SHA-256 hex of the key. */
export const REDACTED_KEY_PREFIX = '[REDACTED]:sha256:';

/**
 * Scan a ticket request: its stored fields and its `Idempotency-Key`. A key is an identifier,
 * compared for equality only, so a key holding a secret is stored as `[REDACTED]:sha256:` and
 * the key's SHA-256 hex: still one stored key per sent key, with nothing of the secret in clear.
 */
export function redactSecrets(
  scanner: SecretScanner,
  text: TicketText,
  idempotencyKey: string | undefined,
): RedactedTicket {
  const fields = scanner.redactFields(text);
  const key = idempotencyKey === undefined ? undefined : scanner.scan(idempotencyKey);
  const keyFound = key !== undefined && key.text !== idempotencyKey;
  const findings = key ? mergeFindings(fields, key) : fields;
  return {
    text: fields.fields,
    idempotencyKey: keyFound
      ? `${REDACTED_KEY_PREFIX}${sha256Hex(idempotencyKey!)}`
      : idempotencyKey,
    tokenHashes: findings.apiTokenHashes,
    appSecretFound: findings.appSecretFound,
    secretRedacted: fields.secretFound || keyFound,
  };
}

/** A comment's body after redaction, and what was found in it and in its key. */
export interface RedactedComment {
  body: string;
  idempotencyKey: string | undefined;
  tokenHashes: string[];
  appSecretFound: boolean;
  secretRedacted: boolean;
}

/** Scan a comment: its body and its `Idempotency-Key`, as {@link redactSecrets} does a ticket. */
export function redactComment(
  scanner: SecretScanner,
  body: string,
  idempotencyKey: string | undefined,
): RedactedComment {
  const r = redactSecrets(
    scanner,
    { subject: '', description: body, category: null, tags: [] },
    idempotencyKey,
  );
  return {
    body: r.text.description,
    idempotencyKey: r.idempotencyKey,
    tokenHashes: r.tokenHashes,
    appSecretFound: r.appSecretFound,
    secretRedacted: r.secretRedacted,
  };
}

/** One audit event to record: the portal whose log receives it, and what it says. */
interface RedactionNotice {
  portalId: number;
  reason: string;
}

const REGENERATE =
  'regenerate it now (Regenerate token on the settings page, or `npm run cli -- token regenerate`).';

/**
 * The notices for one ticket, in recording order: per token (in `tokenHashes` order) one for
 * this portal, plus one for the owning portal when it is another (that notice omits the ticket
 * id, which is this portal's business); then one for the app secret.
 *
 * @param owners token hash → id of the portal owning that live token; absent when not live.
 */
function redactionNotices(input: {
  portalId: number;
  ticketId: string;
  tokenHashes: readonly string[];
  owners: ReadonlyMap<string, number>;
  appSecretFound: boolean;
}): RedactionNotice[] {
  const { portalId, ticketId } = input;
  const notices: RedactionNotice[] = [];
  for (const hash of input.tokenHashes) {
    const owner = input.owners.get(hash);
    if (owner === undefined || owner === portalId) {
      notices.push({
        portalId,
        reason:
          `A Portico API token was pasted into support ticket ${ticketId} and redacted. ` +
          (owner === undefined
            ? 'It is no longer a live token; nothing else to do.'
            : `It is this portal's token: ${REGENERATE}`),
      });
    } else {
      // A token of another portal: that portal must regenerate; this one only learns that a
      // token was redacted.
      notices.push(
        {
          portalId,
          reason: `A Portico API token of another portal was pasted into support ticket ${ticketId} and redacted.`,
        },
        {
          portalId: owner,
          reason:
            "This portal's API token was found pasted into a support ticket of another portal " +
            `and redacted: ${REGENERATE}`,
        },
      );
    }
  }
  if (input.appSecretFound) {
    notices.push({
      portalId,
      reason:
        `The provider app secret was pasted into support ticket ${ticketId} and redacted. ` +
        'The operator must rotate the app secret at the provider and update PROVIDER_APP_SECRET.',
    });
  }
  return notices;
}

/**
 * Record the `secret.redacted` audit events of a new ticket or comment, in its transaction (so a
 * rolled-back change leaves no event). The actor is the requesting user unless `actor` is given
 * (an agent's reply).
 */
export async function recordRedactions(
  tx: Tx,
  input: {
    principal: Pick<Principal, 'portalId' | 'userId'>;
    actor?: Actor;
    ticketId: string;
    tokenHashes: string[];
    appSecretFound: boolean;
    requestId: string | undefined;
  },
): Promise<void> {
  const actor: Actor = input.actor ?? { type: 'user', id: String(input.principal.userId) };
  const base = { actor, action: 'secret.redacted' as const, requestId: input.requestId ?? null };
  const notices = redactionNotices({
    portalId: input.principal.portalId,
    ticketId: input.ticketId,
    tokenHashes: input.tokenHashes,
    owners: await portalsOwningTokens(tx, input.tokenHashes),
    appSecretFound: input.appSecretFound,
  });
  for (const notice of notices) await recordAuditEvent(tx, { ...base, ...notice });
}

/** The warn line for a created ticket that had secrets redacted: counts and ids only. */
export function logRedaction(
  logger: Logger,
  input: {
    ticketId: string;
    portalId: number;
    tokenCount: number;
    appSecretFound: boolean;
    requestId: string | undefined;
  },
): void {
  logger.warn(
    {
      ticketId: input.ticketId,
      portalId: input.portalId,
      apiTokens: input.tokenCount,
      providerAppSecret: input.appSecretFound,
      requestId: input.requestId,
    },
    input.appSecretFound
      ? 'secret redacted from a support ticket: rotate the provider app secret'
      : 'secret redacted from a support ticket: the owning portal must regenerate its API token',
  );
}
