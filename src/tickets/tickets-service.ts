/**
 * Support tickets: create (idempotent, secret-scanned), list (cursor pages) and read, always
 * within the principal's portal.
 *
 * The pieces: queries in tickets-repository.ts (each filters by portal id), `Idempotency-Key`
 * claim and replay in idempotency/idempotency-keys.ts, secret redaction and its audit events in
 * ticket-redaction.ts, the cursor from api-kit/keyset-cursor.ts. This module composes them.
 *
 * @see docs/decisions/0005-idempotency.md
 */
import type { Principal } from '../accounts/principal.ts';
import { createSecretScanner } from '../accounts/secret-scanner.ts';
import type { Database } from '../db/client.ts';
import { claimOrReplay, requestFingerprint } from '../idempotency/idempotency-keys.ts';
import { saveIdempotentResponse } from '../idempotency/idempotency-repository.ts';
import type { TICKET_PRIORITIES } from '../db/schema/support-tickets.ts';
import { randomBase62 } from '../platform/crypto.ts';
import type { Logger } from '../platform/logger.ts';
import type { ErasedPerson } from '../platform/erased-person.ts';
import { ticketsNaming, type TicketNaming } from './ticket-erasure.ts';
import { ticketCursor } from './ticket-cursor.ts';
import {
  logRedaction,
  recordRedactions,
  redactSecrets,
  type TicketText,
} from './ticket-redaction.ts';
import type { TicketEventSteps } from './ticket-events.ts';
import type { TicketStatus } from './ticket-lifecycle.ts';
import type { Ticket } from './ticket-schemas.ts';
import { createTicketThreadService, type TicketThreadService } from './ticket-thread-service.ts';
import { ticketNotFound, toTicket } from './ticket-view.ts';
import { findTicket, insertTicket, listTicketPage, type Tx } from './tickets-repository.ts';

export type TicketPriority = (typeof TICKET_PRIORITIES)[number];
export type { TicketStatus };

/**
 * A create request after schema validation (`CreateTicketBodySchema` in ticket-schemas.ts); the
 * service fills what is left unset.
 */
export interface CreateTicketInput {
  /** 1–200 characters, possibly containing secrets (they are redacted, not refused). */
  subject: string;
  /** 1–10,000 characters, possibly containing secrets. */
  description: string;
  /** Defaults to `normal`. */
  priority?: TicketPriority | undefined;
  /** 1–100 characters; stored as null when unset. */
  category?: string | undefined;
  /** Up to 10 distinct tags of 1–50 characters, kept in order; none when unset. */
  tags?: string[] | undefined;
}

/** The response a create produced, and whether it is a replay of an earlier one. */
export interface CreateTicketResult {
  /** HTTP status: 201 for a new ticket; a replay repeats the first response's. */
  status: number;
  /** The response body: the success envelope around the ticket. */
  body: { success: true; data: Ticket };
  /** True when an `Idempotency-Key` matched an earlier request: nothing was created. */
  replayed: boolean;
}

export interface TicketsServiceDeps {
  /** Where tickets and idempotency keys are stored. */
  db: Database;
  /** The provider app secret to scan for; undefined when no provider is configured. */
  providerAppSecret: string | undefined;
  /** Receives the redaction warn line and failed housekeeping; never a secret. */
  logger: Logger;
  /** Steps other features add to a new ticket (webhooks' `ticket.created`), in its transaction. */
  createdSteps?: readonly TicketCreatedStep[];
  /** Steps other features add to later changes and to support's comments (webhooks). */
  eventSteps?: TicketEventSteps;
}

/**
 * One step another feature adds to a ticket's creation (given at composition in services.ts):
 * it runs in the transaction that inserts the ticket, never for a replayed request.
 */
export type TicketCreatedStep = (
  tx: Tx,
  ticket: { portalId: number; ticketId: string; priority: string; createdAt: Date },
) => Promise<void>;

/**
 * Support tickets of one portal at a time: every method is scoped to the principal's portal.
 * The thread and the customer's changes come from ticket-thread-service.ts.
 */
export interface TicketsService extends TicketThreadService {
  /**
   * Create a ticket for the principal's portal, or replay the first response of an earlier
   * request with the same `Idempotency-Key`.
   *
   * Secrets in any stored field (subject, description, category, tags) are replaced by
   * `[REDACTED]` before anything is stored or hashed, and a key holding one is stored as its
   * digest, with one `secret.redacted` audit event per secret. With a key, the key row is
   * claimed in the ticket's transaction: a concurrent request with the same key waits, then
   * replays (or conflicts).
   *
   * @param args.idempotencyKey the `Idempotency-Key` header, when sent.
   * @param args.requestId the request id, copied into audit events and the log line.
   * @returns status 201 and the ticket, or the stored first response with `replayed: true`.
   * @throws AppError `idempotency_conflict` (409) when the key was used within 24 hours for a
   *   different request.
   * @see https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/
   */
  createTicket(args: {
    principal: Principal;
    input: CreateTicketInput;
    idempotencyKey?: string | undefined;
    requestId?: string | undefined;
  }): Promise<CreateTicketResult>;

  /**
   * A page of the portal's tickets, newest first.
   *
   * @param options.limit page size, 1–100; `cursor` the previous page's `nextCursor`; `status`
   *   keeps only tickets in that status.
   * @returns the page and the cursor of the next one, null on the last page.
   * @throws AppError `invalid_request` for a cursor this service did not produce.
   */
  listTickets(
    principal: Pick<Principal, 'portalId'>,
    options: { limit: number; cursor?: string | undefined; status?: TicketStatus | undefined },
  ): Promise<{ items: Ticket[]; nextCursor: string | null }>;

  /**
   * One ticket of the principal's portal.
   *
   * @throws AppError `not_found` for an unknown id and for another portal's ticket alike.
   */
  getTicket(principal: Pick<Principal, 'portalId'>, id: string): Promise<Ticket>;

  /**
   * The portal's tickets whose subject or description names the person (phone, email, names,
   * WhatsApp ids; the match their erasure uses), newest first, at most `limit` (1–50).
   *
   * @see docs/decisions/0066-contact-page.md
   */
  ticketsNaming(person: ErasedPerson, limit: number): Promise<TicketNaming[]>;
}

/** Public ticket id: `tkt_` + base62 of 16 random bytes. */
function newTicketId(): string {
  return `tkt_${randomBase62(16)}`;
}

/** The stored fields of a new ticket: redacted text, defaults applied. */
interface CleanTicket extends TicketText {
  priority: TicketPriority;
}

/**
 * The transactional part of a create: claim the key (or replay), insert the ticket, record
 * redaction events, save the response under the key. All or nothing, so a failed first attempt
 * leaves no key behind.
 */
async function createOrReplay(
  tx: Tx,
  args: {
    principal: Principal;
    clean: CleanTicket;
    redaction: { tokenHashes: string[]; appSecretFound: boolean; secretRedacted: boolean };
    idempotencyKey: string | undefined;
    requestHash: string;
    requestId: string | undefined;
    createdSteps: readonly TicketCreatedStep[];
  },
): Promise<CreateTicketResult> {
  const { principal, redaction, idempotencyKey } = args;
  if (idempotencyKey !== undefined) {
    const first = await claimOrReplay(tx, principal.portalId, idempotencyKey, args.requestHash);
    if (first) {
      return {
        status: first.status,
        body: first.body as CreateTicketResult['body'],
        replayed: true,
      };
    }
  }
  const row = await insertTicket(tx, {
    id: newTicketId(),
    portalId: principal.portalId,
    ...args.clean,
    requesterUserId: principal.userId,
    secretRedacted: redaction.secretRedacted,
  });
  for (const step of args.createdSteps) {
    await step(tx, {
      portalId: principal.portalId,
      ticketId: row.id,
      priority: row.priority,
      createdAt: row.createdAt,
    });
  }
  if (redaction.secretRedacted) {
    await recordRedactions(tx, {
      principal,
      ticketId: row.id,
      tokenHashes: redaction.tokenHashes,
      appSecretFound: redaction.appSecretFound,
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
}

/** The tickets service over `deps.db`. Creating it does no I/O. */
export function createTicketsService({
  db,
  providerAppSecret,
  logger,
  createdSteps = [],
  eventSteps = {},
}: TicketsServiceDeps): TicketsService {
  const scanner = createSecretScanner(providerAppSecret);

  return {
    ...createTicketThreadService({ db, scanner, logger, steps: eventSteps }),

    async createTicket({ principal, input, idempotencyKey, requestId }) {
      const redaction = redactSecrets(
        scanner,
        {
          subject: input.subject,
          description: input.description,
          category: input.category ?? null,
          tags: input.tags ?? [],
        },
        idempotencyKey,
      );
      const clean: CleanTicket = { ...redaction.text, priority: input.priority ?? 'normal' };
      const requestHash = requestFingerprint('POST /support/tickets', clean);
      const result = await db.transaction((tx) =>
        createOrReplay(tx, {
          principal,
          clean,
          redaction,
          idempotencyKey: redaction.idempotencyKey,
          requestHash,
          requestId,
          createdSteps,
        }),
      );
      if (result.replayed) return result;

      if (redaction.secretRedacted) {
        logRedaction(logger, {
          ticketId: result.body.data.id,
          portalId: principal.portalId,
          tokenCount: redaction.tokenHashes.length,
          appSecretFound: redaction.appSecretFound,
          requestId,
        });
      }
      return result;
    },

    async listTickets(principal, options) {
      const page = await listTicketPage(db, principal.portalId, {
        limit: options.limit,
        after: ticketCursor.after(options.cursor),
        ...(options.status ? { status: options.status } : {}),
      });
      return ticketCursor.page(page, toTicket);
    },

    async getTicket(principal, id) {
      const row = await findTicket(db, principal.portalId, id);
      if (!row) throw ticketNotFound();
      return toTicket(row);
    },

    ticketsNaming: (person, limit) => ticketsNaming(db, person, Math.min(Math.max(limit, 1), 50)),
  };
}
