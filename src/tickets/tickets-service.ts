/**
 * Support tickets: create (idempotent, secret-scanned), list (cursor pages) and read, always
 * within the principal's portal.
 *
 * @see ../../../shared/spec/external-api-and-partner-flow.md §4.2, §5.2 rule 7
 * @see ../../../shared/DESIGN.md "Error envelope", "Security invariants" 1 and 3
 */
import type { Principal } from '../accounts/principal.ts';
import { recordAuditEvent, type Actor } from '../audit/audit-log.ts';
import type { Database } from '../db/client.ts';
import type { TICKET_PRIORITIES, TICKET_STATUSES } from '../db/schema/support-tickets.ts';
import { randomBase62, sha256Hex } from '../platform/crypto.ts';
import { AppError } from '../platform/errors.ts';
import { createSecretScanner } from './secret-scanner.ts';
import { decodeCursor, encodeCursor } from './ticket-cursor.ts';
import type { Ticket } from './ticket-schemas.ts';
import {
  claimIdempotencyKey,
  findIdempotencyKey,
  findTicket,
  insertTicket,
  listTicketPage,
  portalsOwningTokens,
  purgeExpiredIdempotencyKeys,
  saveIdempotentResponse,
  type TicketRow,
  type Tx,
} from './tickets-repository.ts';
import type { Logger } from '../platform/logger.ts';

export type TicketPriority = (typeof TICKET_PRIORITIES)[number];
export type TicketStatus = (typeof TICKET_STATUSES)[number];

/** A create request after schema validation (defaults applied). */
export interface CreateTicketInput {
  subject: string;
  description: string;
  priority?: TicketPriority | undefined;
  category?: string | undefined;
  tags?: string[] | undefined;
}

/** The response a create produced, and whether it is a replay of an earlier one. */
export interface CreateTicketResult {
  status: number;
  body: { success: true; data: Ticket };
  /** True when an `Idempotency-Key` matched an earlier request: nothing was created. */
  replayed: boolean;
}

export interface TicketsServiceDeps {
  db: Database;
  /** The provider app secret to scan for; undefined when no provider is configured. */
  providerAppSecret: string | undefined;
  logger: Logger;
}

export type TicketsService = ReturnType<typeof createTicketsService>;

/** Public ticket id: `tkt_` + base62 of 16 random bytes. */
function newTicketId(): string {
  return `tkt_${randomBase62(16)}`;
}

function toTicket(row: TicketRow): Ticket {
  return {
    id: row.id,
    subject: row.subject,
    description: row.description,
    priority: row.priority,
    status: row.status,
    category: row.category,
    tags: row.tags,
    requester: { userId: row.requesterUserId },
    secretRedacted: row.secretRedacted,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** JSON with object keys sorted, so equal requests hash equally whatever the key order. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

function notFound(): AppError {
  return new AppError('not_found', 'No ticket with this id.');
}

export function createTicketsService({ db, providerAppSecret, logger }: TicketsServiceDeps) {
  const scanner = createSecretScanner(providerAppSecret);

  /** Audit events for secrets found in a new ticket; in the ticket's transaction. */
  async function recordRedactions(
    tx: Tx,
    input: {
      principal: Principal;
      ticketId: string;
      tokenHashes: string[];
      appSecretFound: boolean;
      requestId: string | undefined;
    },
  ): Promise<void> {
    const actor: Actor = { type: 'user', id: String(input.principal.userId) };
    const base = { actor, action: 'secret.redacted' as const, requestId: input.requestId ?? null };
    const owners = await portalsOwningTokens(tx, input.tokenHashes);
    for (const hash of input.tokenHashes) {
      const owner = owners.get(hash);
      if (owner === undefined || owner === input.principal.portalId) {
        await recordAuditEvent(tx, {
          ...base,
          portalId: input.principal.portalId,
          reason:
            `A Portico API token was pasted into support ticket ${input.ticketId} and redacted. ` +
            (owner === undefined
              ? 'It is no longer a live token; nothing else to do.'
              : "It is this portal's token: regenerate it now (Regenerate token on the settings page, or `npm run cli -- token regenerate`)."),
        });
      } else {
        // A token of another portal: that portal must regenerate; this one only learns that a
        // token was redacted.
        await recordAuditEvent(tx, {
          ...base,
          portalId: input.principal.portalId,
          reason: `A Portico API token of another portal was pasted into support ticket ${input.ticketId} and redacted.`,
        });
        await recordAuditEvent(tx, {
          ...base,
          portalId: owner,
          reason:
            "This portal's API token was found pasted into a support ticket of another portal " +
            'and redacted: regenerate it now (Regenerate token on the settings page, or `npm run cli -- token regenerate`).',
        });
      }
    }
    if (input.appSecretFound) {
      await recordAuditEvent(tx, {
        ...base,
        portalId: input.principal.portalId,
        reason:
          `The provider app secret was pasted into support ticket ${input.ticketId} and redacted. ` +
          'The operator must rotate the app secret at the provider and update PROVIDER_APP_SECRET.',
      });
    }
  }

  return {
    /**
     * Create a ticket for the principal's portal, or replay the first response of an earlier
     * request with the same `Idempotency-Key`.
     *
     * Secrets in subject and description are replaced before anything is stored or hashed.
     * With a key, the key row is claimed in the ticket's transaction: a concurrent request with
     * the same key waits, then replays (or conflicts).
     *
     * @throws AppError `idempotency_conflict` (409) when the key was used within 24 hours for a
     *   different request.
     * @see https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/
     */
    async createTicket(args: {
      principal: Principal;
      input: CreateTicketInput;
      idempotencyKey?: string | undefined;
      requestId?: string | undefined;
    }): Promise<CreateTicketResult> {
      const { principal, input, idempotencyKey } = args;
      const subject = scanner.scan(input.subject);
      const description = scanner.scan(input.description);
      const tokenHashes = [...new Set([...subject.apiTokenHashes, ...description.apiTokenHashes])];
      const appSecretFound = subject.appSecretFound || description.appSecretFound;
      const secretRedacted = tokenHashes.length > 0 || appSecretFound;
      const clean = {
        subject: subject.text,
        description: description.text,
        priority: input.priority ?? 'normal',
        category: input.category ?? null,
        tags: input.tags ?? [],
      };
      const requestHash = sha256Hex(canonicalJson({ route: 'POST /support/tickets', clean }));

      const result = await db.transaction(async (tx): Promise<CreateTicketResult> => {
        if (idempotencyKey !== undefined) {
          const claimed = await claimIdempotencyKey(
            tx,
            principal.portalId,
            idempotencyKey,
            requestHash,
          );
          if (!claimed) {
            const existing = await findIdempotencyKey(tx, principal.portalId, idempotencyKey);
            if (!existing || existing.responseStatus === null) {
              // Unreachable: the key row and its response are written in one transaction.
              throw new AppError('internal_error', 'The idempotency record is incomplete.');
            }
            if (existing.requestHash !== requestHash) {
              throw new AppError(
                'idempotency_conflict',
                'This Idempotency-Key was already used with a different request in the last ' +
                  '24 hours; use a new key for a new request.',
              );
            }
            return {
              status: existing.responseStatus,
              body: existing.responseBody as CreateTicketResult['body'],
              replayed: true,
            };
          }
        }
        const row = await insertTicket(tx, {
          id: newTicketId(),
          portalId: principal.portalId,
          ...clean,
          requesterUserId: principal.userId,
          secretRedacted,
        });
        if (secretRedacted) {
          await recordRedactions(tx, {
            principal,
            ticketId: row.id,
            tokenHashes,
            appSecretFound,
            requestId: args.requestId,
          });
        }
        const created = {
          status: 201,
          body: { success: true as const, data: toTicket(row) },
          replayed: false,
        };
        if (idempotencyKey !== undefined) {
          await saveIdempotentResponse(tx, principal.portalId, idempotencyKey, created);
        }
        return created;
      });

      if (idempotencyKey !== undefined && !result.replayed) {
        // Housekeeping after commit: a failure here costs nothing but disk, so it is logged.
        await purgeExpiredIdempotencyKeys(db, principal.portalId).catch((err: unknown) =>
          logger.warn({ err, portalId: principal.portalId }, 'could not purge expired keys'),
        );
      }
      if (!result.replayed && secretRedacted) {
        // Counts and ids only: the secret itself never reaches a log line.
        logger.warn(
          {
            ticketId: result.body.data.id,
            portalId: principal.portalId,
            apiTokens: tokenHashes.length,
            providerAppSecret: appSecretFound,
            requestId: args.requestId,
          },
          appSecretFound
            ? 'secret redacted from a support ticket: rotate the provider app secret'
            : 'secret redacted from a support ticket: the owning portal must regenerate its API token',
        );
      }
      return result;
    },

    /**
     * A page of the portal's tickets, newest first.
     *
     * @param options.limit 1–100; `cursor` the previous page's `nextCursor`.
     * @throws AppError `invalid_request` for a cursor this service did not produce.
     */
    async listTickets(
      principal: Pick<Principal, 'portalId'>,
      options: { limit: number; cursor?: string | undefined; status?: TicketStatus | undefined },
    ): Promise<{ items: Ticket[]; nextCursor: string | null }> {
      const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
      const { rows, hasMore } = await listTicketPage(db, principal.portalId, {
        limit: options.limit,
        after,
        ...(options.status ? { status: options.status } : {}),
      });
      const last = rows.at(-1);
      return {
        items: rows.map(toTicket),
        nextCursor: hasMore && last ? encodeCursor(last) : null,
      };
    },

    /**
     * One ticket of the principal's portal.
     *
     * @throws AppError `not_found` for an unknown id and for another portal's ticket alike.
     */
    async getTicket(principal: Pick<Principal, 'portalId'>, id: string): Promise<Ticket> {
      const row = await findTicket(db, principal.portalId, id);
      if (!row) throw notFound();
      return toTicket(row);
    },
  };
}
