/**
 * Portico-side message drafts: compose a message and its recipients, keep it, send it once.
 *
 * Sending expands the recipients (contact ids, phones, every contact with the tag; one message
 * per distinct phone) and hands each to the messaging send service, which applies the same
 * refusals as `POST /messaging/messages` (opt-out, 24-hour window, template approval, credit);
 * a refused recipient is reported and the others go on. A template variable naming a contact
 * field is resolved per recipient first (draft-personalisation.ts); a recipient without the
 * field and no fallback is refused (`invalid_template_parameters`). A draft is claimed before the first
 * message (`sent_at` set atomically), so it is sent at most once, also by concurrent requests
 * on several instances. If every recipient was refused, nothing was sent: the claim is undone
 * and the draft can be fixed and sent again.
 *
 * @see docs/decisions/0016-messaging.md
 */
import type { Principal as FullPrincipal } from '../../accounts/principal.ts';
import type { DraftMessage, DraftRecipients } from '../../db/schema/message-drafts.ts';
import type { Database } from '../../db/client.ts';
import { keysetCursor } from '../../api-kit/keyset-cursor.ts';
import { normalisePhone } from '../../contacts/phone.ts';
import type { ErasureStep } from '../../contacts/contacts-service.ts';
import { randomBase62 } from '../../platform/crypto.ts';
import { AppError, type ErrorDetail } from '../../platform/errors.ts';
import { notConnected } from '../provider/provider-adapter.ts';
import * as repo from './drafts-repository.ts';
import { contactsOf, isPersonalised, resolveParameters } from './draft-personalisation.ts';
import {
  TAG_RECIPIENTS_MAX,
  type Draft,
  type ListDraftsQuery,
  type NewDraftBody,
  type PatchDraftBody,
} from './drafts-schemas.ts';

const draftCursor = keysetCursor(/^drf_[0-9A-Za-z]{1,60}$/);

/** Whose drafts: every query filters by this portal. */
type Principal = Pick<FullPrincipal, 'portalId'>;

/** A draft's message for one recipient: its contact parameters resolved to texts. */
type ResolvedMessage =
  | Extract<DraftMessage, { type: 'text' }>
  | {
      type: 'template';
      template: { name: string; language: string; parameters: string[] };
    };

/** One message as the send service takes it (the body of `POST /messaging/messages`). */
export type OutgoingMessage = ResolvedMessage & { to?: string; contactId?: string; from?: string };

/**
 * The messaging send service's single send. Refusals are thrown as AppError (their `code` and
 * `message` are reported per recipient); anything else stops the send.
 */
export type SendMessage = (principal: FullPrincipal, message: OutgoingMessage) => Promise<unknown>;

interface DraftsServiceDeps {
  db: Database;
  /** Seals and opens each draft's message and recipients. */
  keyring: repo.DraftKeyring;
  /** The send service; undefined on a server without one (sending answers 503). */
  send?: SendMessage | undefined;
  /** Whether the portal has an active provider connection (checked before a send). */
  isConnected: (portalId: number) => Promise<boolean>;
}

interface SendOutcome {
  queued: number;
  refused: { recipient: string; code: string; message: string }[];
  sentAt: string | null;
}

export type DraftsService = ReturnType<typeof createDraftsService>;

function invalid(details: ErrorDetail[]): AppError {
  return new AppError('invalid_request', 'The draft is not valid.', { details });
}

/** The message of a body, checked: `type` says which of `text` / `template` it carries. */
function messageOf(b: Pick<NewDraftBody, 'type' | 'text' | 'template'>): DraftMessage {
  if (b.type === 'text') {
    if (!b.text || b.template)
      throw invalid([
        { field: 'body.text', message: 'is required (and template not allowed) for type text' },
      ]);
    return { type: 'text', text: { body: b.text.body } };
  }
  if (!b.template || b.text)
    throw invalid([
      { field: 'body.template', message: 'is required (and text not allowed) for type template' },
    ]);
  const { name, language, parameters } = b.template;
  return { type: 'template', template: { name, language, parameters: parameters ?? [] } };
}

/** Recipients with every phone in E.164 (duplicates dropped). @throws AppError per bad phone. */
function recipientsOf(r: Partial<DraftRecipients> | undefined): DraftRecipients {
  const details: ErrorDetail[] = [];
  const phones = new Set<string>();
  (r?.phones ?? []).forEach((p, i) => {
    const result = normalisePhone(p);
    if (result.ok) phones.add(result.e164);
    else details.push({ field: `body.recipients.phones[${i}]`, message: result.message });
  });
  if (details.length > 0) throw invalid(details);
  return { contactIds: r?.contactIds ?? [], phones: [...phones], tag: r?.tag ?? null };
}

function toDraft(row: repo.DraftRow): Draft {
  return {
    id: row.id,
    ...row.message,
    recipients: row.recipients,
    from: row.fromPhoneNumberId,
    sentAt: row.sentAt?.toISOString() ?? null,
    sendResult: row.sendResult ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function notFound(): AppError {
  return new AppError('not_found', 'No such draft.');
}

function alreadySent(sentAt: Date | null): AppError {
  return new AppError(
    'conflict',
    `The draft was sent${sentAt ? ` at ${sentAt.toISOString()}` : ''}; a sent draft cannot change or be sent again. Create a new draft.`,
  );
}

export function createDraftsService(deps: DraftsServiceDeps) {
  const { db, keyring } = deps;

  /** Load a draft of the portal. @throws AppError `not_found`. */
  async function load(portalId: number, id: string) {
    const row = await repo.findDraft(db, keyring, portalId, id);
    if (!row) throw notFound();
    return row;
  }

  return {
    /** @throws AppError `invalid_request` (message/type mismatch, a phone without country code). */
    async createDraft(principal: Principal, body: NewDraftBody): Promise<Draft> {
      const row = await repo.insertDraft(db, keyring, {
        id: `drf_${randomBase62(16)}`,
        portalId: principal.portalId,
        message: messageOf(body),
        recipients: recipientsOf(body.recipients),
        fromPhoneNumberId: body.from ?? null,
      });
      return toDraft(row);
    },

    /** @throws AppError `not_found`. */
    getDraft: async (principal: Principal, id: string): Promise<Draft> =>
      toDraft(await load(principal.portalId, id)),

    /** Newest first. @throws AppError `invalid_request` for a cursor not made here. */
    async listDrafts(principal: Principal, query: ListDraftsQuery) {
      const page = await repo.listDraftPage(db, keyring, principal.portalId, {
        limit: query.limit,
        after: draftCursor.after(query.cursor),
        sent: query.sent,
      });
      return draftCursor.page(page, toDraft);
    },

    /**
     * Change an unsent draft: the fields given replace the stored ones (`recipients` as a whole
     * object, its missing lists empty; `from: null` clears it).
     *
     * @throws AppError `not_found`, `conflict` (already sent), `invalid_request`.
     */
    async patchDraft(principal: Principal, id: string, patch: PatchDraftBody): Promise<Draft> {
      const current = await load(principal.portalId, id);
      if (current.sentAt) throw alreadySent(current.sentAt);
      const stored = current.message;
      // Changing `type` drops the stored content of the other type; otherwise it is kept
      // unless replaced (a template on a text draft, or the reverse, is refused).
      const kept =
        patch.type !== undefined && patch.type !== stored.type
          ? {}
          : stored.type === 'text'
            ? { text: stored.text }
            : { template: stored.template };
      const merged = {
        type: patch.type ?? stored.type,
        ...kept,
        ...(patch.text && { text: patch.text }),
        ...(patch.template && { template: patch.template }),
      };
      const row = await repo.updateUnsentDraft(db, keyring, principal.portalId, id, {
        message: messageOf(merged),
        recipients: patch.recipients ? recipientsOf(patch.recipients) : current.recipients,
        fromPhoneNumberId: patch.from === undefined ? current.fromPhoneNumberId : patch.from,
      });
      if (!row) throw alreadySent(null);
      return toDraft(row);
    },

    /** Delete a draft, sent or not (its messages stay in the log). @throws AppError `not_found`. */
    async deleteDraft(principal: Principal, id: string): Promise<{ id: string; deleted: true }> {
      if (!(await repo.deleteDraft(db, principal.portalId, id))) throw notFound();
      return { id, deleted: true };
    },

    /**
     * Send the draft to each recipient, one message each, through the send service.
     *
     * @throws AppError `not_found`; `conflict` (already sent); `invalid_request` (no
     *   recipients); `not_connected`; `unavailable` (no send service on this server).
     */
    sendDraft: async (principal: FullPrincipal, id: string): Promise<SendOutcome> =>
      sendDraft(deps, await load(principal.portalId, id), principal),
  };
}

/** A contact (by id) or a phone (E.164); `label` is what the refusal list names. */
type Recipient = { contactId: string; label: string } | { phone: string; label: string };

/**
 * One recipient per distinct phone: the listed contacts (an id of no contact of the portal is
 * reported as such by the send service), the tag's contacts, then the listed phones that are
 * not a listed or tagged contact's.
 */
async function expand(db: Database, portalId: number, r: DraftRecipients): Promise<Recipient[]> {
  const out: Recipient[] = [];
  const phones = new Set<string>();
  const ids = new Set<string>();
  const known = await repo.contactsByIds(db, portalId, r.contactIds);
  const tagged = r.tag ? await repo.contactsByTag(db, portalId, r.tag, TAG_RECIPIENTS_MAX) : [];
  for (const c of [...known, ...tagged]) {
    if (ids.has(c.id) || (c.phone !== null && phones.has(c.phone))) continue;
    ids.add(c.id);
    if (c.phone !== null) phones.add(c.phone);
    out.push({ contactId: c.id, label: c.id });
  }
  for (const id of r.contactIds)
    if (!ids.has(id)) {
      ids.add(id);
      out.push({ contactId: id, label: id });
    }
  for (const phone of r.phones)
    if (!phones.has(phone)) {
      phones.add(phone);
      out.push({ phone, label: phone });
    }
  return out;
}

async function sendDraft(
  deps: DraftsServiceDeps,
  draft: repo.DraftRow,
  principal: FullPrincipal,
): Promise<SendOutcome> {
  const { db } = deps;
  const send = deps.send;
  if (!send) throw new AppError('unavailable', 'Sending messages is not available on this server.');
  if (draft.sentAt) throw alreadySent(draft.sentAt);
  const recipients = await expand(db, principal.portalId, draft.recipients);
  if (recipients.length === 0)
    throw invalid([{ field: 'recipients', message: 'the draft has no recipient to send to' }]);
  if (!(await deps.isConnected(principal.portalId))) throw notConnected();
  const claimed = await repo.claimDraft(db, deps.keyring, principal.portalId, draft.id);
  if (!claimed) throw alreadySent(null);
  const outcome: SendOutcome = { queued: 0, refused: [], sentAt: null };
  const stored = claimed.message;
  const contacts =
    stored.type === 'template' && isPersonalised(stored.template.parameters)
      ? await contactsOf(db, principal.portalId, recipients)
      : null;
  for (const [k, r] of recipients.entries()) {
    let message: ResolvedMessage;
    if (stored.type === 'text') message = stored;
    else {
      // Texts only (no contacts read) never fail; a contact field fails without value or fallback.
      const contact = contacts?.[k] ?? null;
      const resolved = resolveParameters(stored.template.parameters, contact);
      if ('reason' in resolved) {
        outcome.refused.push(
          'contactId' in r && !contact
            ? { recipient: r.label, code: 'not_found', message: 'No contact with this id.' }
            : { recipient: r.label, code: 'invalid_template_parameters', message: resolved.reason },
        );
        continue;
      }
      message = { type: 'template', template: { ...stored.template, ...resolved } };
    }
    try {
      await send(principal, {
        ...message,
        ...('contactId' in r ? { contactId: r.contactId } : { to: r.phone }),
        ...(claimed.fromPhoneNumberId && { from: claimed.fromPhoneNumberId }),
      });
      outcome.queued++;
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      outcome.refused.push({ recipient: r.label, code: err.code, message: err.message });
    }
  }
  const sentAt = await repo.finishSend(
    db,
    principal.portalId,
    draft.id,
    { queued: outcome.queued, refused: outcome.refused.length },
    outcome.queued === 0,
  );
  return { ...outcome, sentAt: sentAt?.toISOString() ?? null };
}

/**
 * The contact erasure step (contacts/'s `ErasureStep`): the person leaves every draft that
 * names them; a draft for them alone is deleted.
 *
 * @param keyring opens and re-seals the drafts' recipients.
 */
export const removeFromDraftsOnErasure =
  (keyring: repo.DraftKeyring): ErasureStep =>
  async (tx, contact) => {
    const { deleted, changed } = await repo.removePersonFromDrafts(tx, keyring, contact);
    return [
      { kind: 'erased', what: 'drafts', count: deleted },
      { kind: 'anonymised', what: 'drafts', count: changed },
    ];
  };
