/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The pages of `/contacts`, on the page kit: the list with its search (each row links to the
 * contact's page, contact-page.tsx), the CSV upload, the import preview and the erasure's
 * confirmation step.
 */
import {
  Actions,
  Badge,
  Button,
  ButtonLink,
  Card,
  ConfirmStep,
  DataTable,
  EmptyState,
  Field,
  PageHeader,
} from '../../browser/kit.tsx';
import { Flash, type FlashCounts, type FlashKey } from '../../browser/flash.tsx';
import { Layout } from '../../browser/layout.tsx';
import type { Contact } from '../../contacts/contact-schemas.ts';

type SignedIn = { email: string; csrfToken: string };

export interface ContactsPageProps {
  signedIn: SignedIn;
  items: Contact[];
  /** The search as typed (`q`, `tag`); the next page keeps it. */
  search: { q?: string | undefined; tag?: string | undefined };
  nextCursor: string | null;
  /** The outcome of the last action (`?done=` key from the flash vocabulary). */
  flash?: { key: FlashKey; counts: FlashCounts } | null | undefined;
}

function nameOf(c: Contact): string {
  return [c.firstName, c.lastName].filter(Boolean).join(' ') || (c.profileName ?? '');
}

/** How the person is reached: the phone, else the WhatsApp username or user id (BSUID). */
function addressOf(c: Contact): string {
  return c.phone ?? (c.username ? `@${c.username}` : (c.waUserId ?? ''));
}

function nextHref(search: ContactsPageProps['search'], cursor: string): string {
  const params = new URLSearchParams();
  if (search.q) params.set('q', search.q);
  if (search.tag) params.set('tag', search.tag);
  params.set('cursor', cursor);
  return `/contacts?${params.toString()}`;
}

const CONSENT_TONE = { opted_in: 'ok', opted_out: 'bad', unknown: 'neutral' } as const;

function ContactsTable({ items }: { items: Contact[] }) {
  return (
    <DataTable
      testid="contacts"
      rows={items}
      rowKey={(c) => c.id}
      columns={[
        {
          label: 'Phone',
          cell: (c) => (
            <a href={`/contacts/${c.id}`} data-testid="contact-link">
              {addressOf(c) || 'Contact'}
            </a>
          ),
        },
        { label: 'Name', cell: nameOf, kind: 'text' },
        { label: 'Email', cell: (c) => c.email ?? '', kind: 'long' },
        { label: 'Tags', cell: (c) => c.tags.join(', '), kind: 'text' },
        {
          label: 'WhatsApp',
          cell: (c) => (
            <Badge tone={CONSENT_TONE[c.consent.whatsapp]}>
              {c.consent.whatsapp.replace('_', ' ')}
            </Badge>
          ),
        },
        {
          label: 'Actions',
          cell: (c) => (
            <a href={`/contacts/${c.id}/delete`} aria-label={`Delete ${addressOf(c)}`}>
              Delete
            </a>
          ),
        },
      ]}
    />
  );
}

/** `/contacts`: search, a page of contacts, and the CSV upload. */
export function ContactsPage(p: ContactsPageProps) {
  const { csrfToken } = p.signedIn;
  const searching = Boolean(p.search.q || p.search.tag);
  return (
    <Layout title="Contacts" signedIn={p.signedIn} current="contacts" wide>
      <PageHeader
        title="Contacts"
        lead="The people you message, matched by phone number."
        actions={<ButtonLink href="#import">Import a CSV file</ButtonLink>}
      />
      <Flash flash={p.flash} />
      <Card>
        <form method="get" action="/contacts" class="filters" role="search">
          <Field
            name="q"
            id="q"
            label="Search"
            value={p.search.q}
            maxLength={100}
            help="Name, email or phone digits"
          />
          <Field name="tag" id="tag" label="Tag" value={p.search.tag} maxLength={50} />
          <Button kind="secondary">Search</Button>
        </form>
      </Card>
      <Card title="People">
        {p.items.length === 0 ? (
          <EmptyState
            testid="no-contacts"
            title={searching ? 'No contacts match.' : 'No contacts yet.'}
            action={
              searching
                ? { href: '/contacts', label: 'Show every contact' }
                : { href: '#import', label: 'Import a CSV file' }
            }
          >
            {searching
              ? 'Try fewer letters, or another tag.'
              : 'Import your contacts from a CSV file, or add them through the API.'}
          </EmptyState>
        ) : (
          <ContactsTable items={p.items} />
        )}
        {p.nextCursor && (
          <div class="pager">
            <span />
            <ButtonLink href={nextHref(p.search, p.nextCursor)} kind="secondary">
              Next page
            </ButtonLink>
          </div>
        )}
      </Card>
      <Card title="Import a CSV file" id="import">
        <p class="muted">
          A header line names the columns: <code>phone</code> (with its country code, required),{' '}
          <code>email</code>, <code>firstName</code>, <code>lastName</code>, <code>tags</code>{' '}
          (separated by <code>;</code>), <code>consent</code> (<code>opted_in</code>,{' '}
          <code>opted_out</code>, <code>unknown</code>); any other column becomes an attribute. Up
          to 1,000 rows; contacts are matched by phone. You see what would fail before anything is
          written.
        </p>
        <form method="post" action="/contacts/import" enctype="multipart/form-data">
          <input type="hidden" name="csrf" value={csrfToken} />
          <label for="file">CSV file</label>
          <input id="file" type="file" name="file" accept=".csv,text/csv" required />
          <Actions>
            <Button>Check the file</Button>
          </Actions>
        </form>
      </Card>
    </Layout>
  );
}

export interface ImportPreviewProps {
  signedIn: SignedIn;
  fileName: string;
  rows: number;
  ready: number;
  failed: { index: number; field: string; message: string }[];
  /** The file's text, posted back by the confirmation form. */
  csv: string;
}

/** What an uploaded CSV would do, before anything is written. */
export function ImportPreviewPage(p: ImportPreviewProps) {
  const skipped = p.rows - p.ready;
  return (
    <Layout title="Check the import" signedIn={p.signedIn} current="contacts">
      <PageHeader title="Check the import" lead={`${p.fileName}: nothing is written yet.`} />
      <Card>
        <p data-testid="preview-summary">
          {p.rows} row(s), <strong>{p.ready} ready to import</strong>, {skipped} will not be
          imported
          {p.failed.length > skipped ? ` (${p.failed.length} problems)` : ''}.
        </p>
        {p.failed.length > 0 && (
          <DataTable
            testid="preview-failures"
            rows={p.failed}
            rowKey={(f) => `${f.index}-${f.field}`}
            columns={[
              { label: 'Line', cell: (f) => String(f.index + 2) },
              { label: 'Column', cell: (f) => f.field },
              { label: 'Problem', cell: (f) => f.message, kind: 'text' },
            ]}
          />
        )}
        {p.ready > 0 ? (
          <form method="post" action="/contacts/import/confirm" class="actions">
            <input type="hidden" name="csrf" value={p.signedIn.csrfToken} />
            <input type="hidden" name="csv" value={p.csv} />
            <Button>Import {p.ready} contact(s)</Button>
            <ButtonLink href="/contacts" kind="secondary">
              Cancel
            </ButtonLink>
          </form>
        ) : (
          <Actions>
            <ButtonLink href="/contacts" kind="secondary">
              Back to contacts
            </ButtonLink>
          </Actions>
        )}
      </Card>
    </Layout>
  );
}

/** The confirmation step of an erasure. */
export function ConfirmErasePage({ signedIn, contact }: { signedIn: SignedIn; contact: Contact }) {
  return (
    <Layout title="Delete contact" signedIn={signedIn} current="contacts">
      <ConfirmStep
        title="Delete this contact?"
        csrfToken={signedIn.csrfToken}
        action={`/contacts/${contact.id}/delete`}
        confirmLabel="Delete for good"
        cancelHref={`/contacts/${contact.id}`}
        cancelLabel="Cancel"
      >
        <p>
          <strong>{addressOf(contact)}</strong> {nameOf(contact)} {contact.email ?? ''}
        </p>
        <p>
          The contact and everything that names them are erased for good (GDPR art. 17). This cannot
          be undone.
        </p>
      </ConfirmStep>
    </Layout>
  );
}
