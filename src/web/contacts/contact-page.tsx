/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/contacts/{id}` on the page kit: the person's fields and attributes (each an edit form that
 * comes back with its errors and what was typed), their WhatsApp identifiers, consent and its
 * history, their conversations with the last messages, the support tickets that name them, a
 * template to start a conversation, and the way to their erasure (a confirmation step first).
 *
 * @see docs/decisions/0066-contact-page.md
 */
import { ErrorFlash, Flash, type FlashCounts, type FlashKey } from '../../browser/flash.tsx';
import {
  Actions,
  Badge,
  Button,
  ButtonLink,
  Card,
  DataTable,
  EmptyState,
  Field,
  Note,
  PageHeader,
} from '../../browser/kit.tsx';
import { Layout } from '../../browser/layout.tsx';
import type { ConsentChange, ContactDetail } from '../../contacts/contact-schemas.ts';
import type { TicketNaming } from '../../tickets/ticket-erasure.ts';
import type { ComposerView } from '../message-composer.ts';
import { FromField, TemplateBody, Variables } from '../pages/message-composer.tsx';
import { isInbound, shortTime, summaryOf, timeOf, windowWords } from '../inbox/inbox-view.ts';
import type { ContactConversation } from './contact-page-data.ts';

type SignedIn = { email: string; csrfToken: string };

/** The details form as typed (kept when it comes back with an error). */
export interface DetailsForm {
  firstName: string;
  lastName: string;
  phone: string;
  email: string;
  /** Tags separated by commas. */
  tags: string;
}

/** One attribute row of the form: its name and its value as typed. */
export interface AttributeRow {
  key: string;
  value: string;
}

/** A form as the page shows it: values, errors by field, and an error for the whole form. */
export interface FormState<T> {
  values: T;
  errors: Record<string, string>;
  formError?: string | undefined;
}

/** What the "Start a conversation" card shows. */
export type StartCard = { kind: 'opted_out' } | { kind: 'composer'; view: ComposerView };

export interface ContactPageProps {
  signedIn: SignedIn;
  contact: ContactDetail;
  flash?: { key: FlashKey; counts: FlashCounts } | null | undefined;
  details: FormState<DetailsForm>;
  attributes: FormState<{ rows: AttributeRow[]; newKey: string; newValue: string }>;
  conversations: ContactConversation[];
  /** Business numbers' ids → their display numbers, when the account could be read. */
  numberNames: ReadonlyMap<string, string>;
  tickets: TicketNaming[];
  start: StartCard;
  now: Date;
}

/** The person's name as the page titles it: names, else the WhatsApp profile name. */
export function contactName(c: Pick<ContactDetail, 'firstName' | 'lastName' | 'profileName'>) {
  return [c.firstName, c.lastName].filter(Boolean).join(' ') || (c.profileName ?? '');
}

/** How the person is reached: the phone, else the WhatsApp username or user id (BSUID). */
export function contactAddress(c: Pick<ContactDetail, 'phone' | 'username' | 'waUserId'>) {
  return c.phone ?? (c.username ? `@${c.username}` : (c.waUserId ?? ''));
}

/** An attribute's stored value as the form shows it. */
export const attributeText = (v: string | number | boolean): string => String(v);

/** The details form filled from the stored contact. */
export function detailsOf(c: ContactDetail): DetailsForm {
  return {
    firstName: c.firstName ?? '',
    lastName: c.lastName ?? '',
    phone: c.phone ?? '',
    email: c.email ?? '',
    tags: c.tags.join(', '),
  };
}

const CONSENT_TONE = { opted_in: 'ok', opted_out: 'bad', unknown: 'neutral' } as const;
const CONSENT_WORDS = { opted_in: 'opted in', opted_out: 'opted out', unknown: 'unknown' } as const;
const SOURCE_WORDS: Record<ConsentChange['source'], string> = {
  api: 'the API',
  import: 'an import',
  web: 'a page',
  provider: 'the person, in WhatsApp',
  keyword: 'a keyword the person sent',
};

const day = (iso: string) =>
  new Date(iso).toLocaleString('en-GB', {
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZone: 'UTC',
  }) + ' UTC';

function DetailsCard({ p }: { p: ContactPageProps }) {
  const { values, errors, formError } = p.details;
  return (
    <Card title="Details" id="details" testid="details">
      <ErrorFlash>{formError}</ErrorFlash>
      <form method="post" action={`/contacts/${p.contact.id}`} data-testid="details-form">
        <input type="hidden" name="csrf" value={p.signedIn.csrfToken} />
        <div class="grid-2">
          <Field
            name="firstName"
            label="First name"
            value={values.firstName}
            error={errors.firstName}
            maxLength={100}
          />
          <Field
            name="lastName"
            label="Last name"
            value={values.lastName}
            error={errors.lastName}
            maxLength={100}
          />
          <Field
            name="phone"
            label="Phone"
            type="tel"
            value={values.phone}
            error={errors.phone}
            help="With its country code. Another contact of yours cannot have the same one."
            maxLength={40}
          />
          <Field
            name="email"
            label="Email"
            type="email"
            value={values.email}
            error={errors.email}
            maxLength={254}
          />
        </div>
        <Field
          name="tags"
          label="Tags"
          value={values.tags}
          error={errors.tags}
          help="Separated by commas, up to 20."
          maxLength={1200}
        />
        <p class="muted">Leave a field empty to clear it (the phone cannot be cleared).</p>
        <Actions>
          <Button testid="details-save">Save details</Button>
        </Actions>
      </form>
    </Card>
  );
}

function AttributesCard({ p }: { p: ContactPageProps }) {
  const { values, errors, formError } = p.attributes;
  return (
    <Card title="Attributes" id="attributes" testid="attributes">
      <p class="muted">
        Your own fields for this person, such as the extra columns of an imported CSV file. Clear a
        value to remove its attribute.
      </p>
      <ErrorFlash>{formError}</ErrorFlash>
      <form method="post" action={`/contacts/${p.contact.id}/attributes`}>
        <input type="hidden" name="csrf" value={p.signedIn.csrfToken} />
        {values.rows.length === 0 && <p data-testid="no-attributes">No attribute yet.</p>}
        {values.rows.map((row, i) => (
          <div key={row.key}>
            <input type="hidden" name="key" value={row.key} />
            <Field
              name="value"
              id={`a-${i}`}
              label={row.key}
              value={row.value}
              error={errors[row.key]}
              maxLength={500}
            />
          </div>
        ))}
        <fieldset>
          <legend>Add an attribute</legend>
          <div class="grid-2">
            <Field
              name="key"
              id="a-new-key"
              label="Name"
              value={values.newKey}
              error={errors['new-key']}
              help="A letter, then letters, digits or _ (up to 40)."
              maxLength={40}
              autocomplete="off"
            />
            <Field
              name="value"
              id="a-new-value"
              label="Value"
              value={values.newValue}
              error={errors['new-value']}
              maxLength={500}
              autocomplete="off"
            />
          </div>
        </fieldset>
        <Actions>
          <Button testid="attributes-save">Save attributes</Button>
        </Actions>
      </form>
    </Card>
  );
}

function IdentityCard({ contact: c }: { contact: ContactDetail }) {
  const facts: [string, string | null][] = [
    ['Phone', c.phone],
    ['WhatsApp user id (BSUID)', c.waUserId],
    ['Parent user id', c.parentWaUserId],
    ['WhatsApp username', c.username ? `@${c.username}` : null],
    ['WhatsApp profile name', c.profileName],
    ['Last wrote in', c.lastInboundAt ? day(c.lastInboundAt) : null],
    ['Created', day(c.createdAt)],
    ['Contact id', c.id],
  ];
  return (
    <Card title="Identifiers" id="identifiers" testid="identifiers">
      <dl class="facts">
        {facts
          .filter((f): f is [string, string] => f[1] !== null)
          .flatMap(([label, value]) => [
            <dt key={`t-${label}`}>{label}</dt>,
            <dd key={`d-${label}`}>{value}</dd>,
          ])}
      </dl>
    </Card>
  );
}

function ConsentCard({ contact: c }: { contact: ContactDetail }) {
  const state = c.consent.whatsapp;
  return (
    <Card title="Consent" id="consent" testid="consent">
      <p>
        WhatsApp: <Badge tone={CONSENT_TONE[state]}>{CONSENT_WORDS[state]}</Badge>{' '}
        <span class="muted">
          set by {SOURCE_WORDS[c.consent.source]} on {day(c.consent.updatedAt)}
        </span>
      </p>
      {c.consentHistory.length === 0 ? (
        <p class="muted" data-testid="no-consent-history">
          No change recorded.
        </p>
      ) : (
        <DataTable
          testid="consent-history"
          caption="The newest changes first."
          rows={c.consentHistory}
          rowKey={(h) => `${h.at}-${h.scope}-${h.to}-${h.phoneNumberId ?? ''}`}
          columns={[
            { label: 'When', cell: (h) => day(h.at), kind: 'text' },
            {
              label: 'Change',
              cell: (h) => `${CONSENT_WORDS[h.from]} → ${CONSENT_WORDS[h.to]}`,
              kind: 'text',
            },
            {
              label: 'Covers',
              cell: (h) =>
                h.scope === 'marketing'
                  ? `Marketing from number ${h.phoneNumberId ?? ''}`
                  : 'Every message',
              kind: 'text',
            },
            { label: 'By', cell: (h) => SOURCE_WORDS[h.source], kind: 'text' },
          ]}
        />
      )}
    </Card>
  );
}

function ConversationsCard({ p }: { p: ContactPageProps }) {
  return (
    <Card title="Conversations" id="conversations" testid="conversations">
      {p.conversations.length === 0 ? (
        <EmptyState testid="no-conversations" title="No conversation yet.">
          Start one with a template below; the person's messages appear here and in the inbox.
        </EmptyState>
      ) : (
        <ul class="plain">
          {p.conversations.map(({ conversation: c, messages }) => {
            const window = windowWords(c.windowExpiresAt, p.now);
            const number = p.numberNames.get(c.phoneNumberId) ?? c.phoneNumberId;
            return (
              <li key={c.id} data-testid={`conversation-${c.id}`}>
                <div class="card-head">
                  <a href={`/inbox/${c.id}`}>With your number {number}</a>
                  <span class="conv-badges">
                    <Badge tone={window.open ? 'ok' : 'neutral'}>{window.words}</Badge>
                    {c.unreadCount > 0 && <Badge tone="info">{`${c.unreadCount} unread`}</Badge>}
                  </span>
                </div>
                <ul class="plain" aria-label="The last messages, newest first">
                  {messages.map((m) => {
                    const at = shortTime(timeOf(m), p.now);
                    return (
                      <li key={m.id}>
                        <span class="muted">
                          {isInbound(m) ? 'They wrote' : 'You sent'} ·{' '}
                          <time dateTime={at.iso}>{at.text}</time>:
                        </span>{' '}
                        {summaryOf(m)}
                      </li>
                    );
                  })}
                </ul>
              </li>
            );
          })}
        </ul>
      )}
    </Card>
  );
}

function TicketsCard({ tickets }: { tickets: TicketNaming[] }) {
  return (
    <Card title="Support tickets" id="tickets" testid="tickets">
      {tickets.length === 0 ? (
        <p class="muted" data-testid="no-tickets">
          No support ticket names this person.
        </p>
      ) : (
        <>
          <p class="muted">Tickets whose subject or description names this person.</p>
          <ul class="plain">
            {tickets.map((t) => (
              <li key={t.id}>
                <a href={`/support/tickets/${t.id}`}>{t.subject}</a> <Badge>{t.status}</Badge>{' '}
                <span class="muted">{day(t.createdAt.toISOString())}</span>
              </li>
            ))}
          </ul>
        </>
      )}
    </Card>
  );
}

function StartForm({ p, view }: { p: ContactPageProps; view: ComposerView }) {
  const { source } = view;
  if (source.kind === 'not_connected')
    return (
      <EmptyState
        title="Connect your WhatsApp Business account to send messages."
        action={{ href: '/connect', label: 'Connect your account' }}
      />
    );
  if (source.kind === 'unavailable') return <p class="error">{source.message}</p>;
  if (source.templates.length === 0 || source.numbers.length === 0)
    return (
      <p class="muted" data-testid="no-templates">
        The connected account has no approved template (or no number) to send from yet.
      </p>
    );
  const template = view.template ?? source.templates[0]!;
  const action = `/contacts/${p.contact.id}`;
  return (
    <>
      <ErrorFlash>{view.formError}</ErrorFlash>
      <form method="get" action={`${action}#start`} class="filters choice" aria-label="Template">
        <Field
          name="template"
          id="s-template"
          label="Template"
          value={template.id}
          error={view.errors.compose}
          options={source.templates.map((t) => ({
            value: t.id,
            label: `${t.name} (${t.language}) · WABA ${t.wabaId}`,
          }))}
        />
        <Button kind="secondary">Choose</Button>
      </form>
      <form method="post" action={`${action}/send`} data-testid="start-form">
        <input type="hidden" name="csrf" value={p.signedIn.csrfToken} />
        <input type="hidden" name="compose" value={template.id} />
        <input type="hidden" name="key" value={view.idempotencyKey} />
        <TemplateBody template={template} />
        <FromField id="s-from" numbers={source.numbers} template={template} view={view} />
        <Variables template={template} view={view} />
        <Actions>
          <Button testid="start-send">Send template</Button>
          <span class="muted">Its price is held from the credit until it is sent.</span>
        </Actions>
      </form>
    </>
  );
}

function StartCardView({ p }: { p: ContactPageProps }) {
  return (
    <Card title="Start a conversation" id="start" testid="start">
      {p.start.kind === 'opted_out' ? (
        <Note>
          <p>This person opted out of WhatsApp messages: nothing can be sent to them.</p>
        </Note>
      ) : (
        <StartForm p={p} view={p.start.view} />
      )}
    </Card>
  );
}

/** `/contacts/{id}`. */
export function ContactPage(p: ContactPageProps) {
  const name = contactName(p.contact);
  const address = contactAddress(p.contact);
  return (
    <Layout title={name || address || 'Contact'} signedIn={p.signedIn} current="contacts">
      <PageHeader
        title={name || address || 'Contact'}
        lead={name ? address : undefined}
        actions={
          <ButtonLink href="/contacts" kind="secondary">
            All contacts
          </ButtonLink>
        }
      />
      <Flash flash={p.flash} />
      <DetailsCard p={p} />
      <AttributesCard p={p} />
      <Card title="Tags" id="tags" testid="tags">
        {p.contact.tags.length === 0 ? (
          <p class="muted">No tag. Add some under Details.</p>
        ) : (
          <p class="conv-badges" data-testid="tag-list">
            {p.contact.tags.map((t) => (
              <Badge key={t} tone="info">
                {t}
              </Badge>
            ))}
          </p>
        )}
      </Card>
      <IdentityCard contact={p.contact} />
      <ConsentCard contact={p.contact} />
      <ConversationsCard p={p} />
      <TicketsCard tickets={p.tickets} />
      <StartCardView p={p} />
      <Card title="Erase this contact" id="erase">
        <p>
          The contact and everything that names them (message contents, drafts, the stored answers
          of the API) are erased for good. You confirm on the next page.
        </p>
        <Actions>
          <ButtonLink href={`/contacts/${p.contact.id}/delete`} kind="danger" testid="erase">
            Erase this contact…
          </ButtonLink>
        </Actions>
      </Card>
    </Layout>
  );
}
