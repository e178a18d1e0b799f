/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import { Layout } from '../../browser/layout.tsx';
import type { Contact } from '../../contacts/contact-schemas.ts';

type SignedIn = { email: string; csrfToken: string };

export interface ContactsPageProps {
  signedIn: SignedIn;
  items: Contact[];
  /** The search as typed (`q`, `tag`); the next page keeps it. */
  search: { q?: string | undefined; tag?: string | undefined };
  nextCursor: string | null;
  /** A one-line confirmation of what the last action did. */
  notice?: string | undefined;
}

function nameOf(c: Contact): string {
  return [c.firstName, c.lastName].filter(Boolean).join(' ');
}

function nextHref(search: ContactsPageProps['search'], cursor: string): string {
  const params = new URLSearchParams();
  if (search.q) params.set('q', search.q);
  if (search.tag) params.set('tag', search.tag);
  params.set('cursor', cursor);
  return `/contacts?${params.toString()}`;
}

/** `/contacts`: search, a page of contacts, and the CSV upload. */
export function ContactsPage(p: ContactsPageProps) {
  const { csrfToken } = p.signedIn;
  return (
    <Layout title="Contacts" signedIn={p.signedIn}>
      <h1>Contacts</h1>
      {p.notice && (
        <p class="ok" role="status">
          {p.notice}
        </p>
      )}
      <section>
        <form method="get" action="/contacts" class="inline">
          <label for="q">Search</label>
          <input
            id="q"
            name="q"
            type="text"
            value={p.search.q ?? ''}
            maxLength={100}
            placeholder="Name, email or phone digits"
          />
          <label for="tag">Tag</label>
          <input id="tag" name="tag" type="text" value={p.search.tag ?? ''} maxLength={50} />
          <button type="submit">Search</button>
        </form>
        {p.items.length === 0 ? (
          <p class="muted" data-testid="no-contacts">
            No contacts{p.search.q || p.search.tag ? ' match' : ' yet'}.
          </p>
        ) : (
          <table data-testid="contacts">
            <thead>
              <tr>
                <th>Phone</th>
                <th>Name</th>
                <th>Email</th>
                <th>Tags</th>
                <th>WhatsApp</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {p.items.map((c) => (
                <tr key={c.id}>
                  <td class="nowrap">{c.phone}</td>
                  <td>{nameOf(c)}</td>
                  <td>{c.email ?? ''}</td>
                  <td>{c.tags.join(', ')}</td>
                  <td>{c.consent.whatsapp.replace('_', ' ')}</td>
                  <td>
                    <a href={`/contacts/${c.id}/delete`}>Delete</a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {p.nextCursor && (
          <p>
            <a class="button" href={nextHref(p.search, p.nextCursor)}>
              Next page
            </a>
          </p>
        )}
      </section>
      <section id="import">
        <h2>Import a CSV file</h2>
        <p class="muted">
          A header line names the columns: <code>phone</code> (with its country code, required),
          <code>email</code>, <code>firstName</code>, <code>lastName</code>, <code>tags</code>
          (separated by <code>;</code>), <code>consent</code> (<code>opted_in</code>,
          <code>opted_out</code>, <code>unknown</code>); any other column becomes an attribute. Up
          to 1,000 rows; contacts are matched by phone. You see what would fail before anything is
          written.
        </p>
        <form method="post" action="/contacts/import" enctype="multipart/form-data">
          <input type="hidden" name="csrf" value={csrfToken} />
          <input type="file" name="file" accept=".csv,text/csv" required />
          <button type="submit">Check the file</button>
        </form>
      </section>
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
  return (
    <Layout title="Check the import" signedIn={p.signedIn}>
      <h1>Check the import</h1>
      <section>
        <p data-testid="preview-summary">
          {p.fileName}: {p.rows} row(s), <strong>{p.ready} ready to import</strong>,{' '}
          {p.failed.length} will not be imported. Nothing is written yet.
        </p>
        {p.failed.length > 0 && (
          <table data-testid="preview-failures">
            <thead>
              <tr>
                <th>Line</th>
                <th>Column</th>
                <th>Problem</th>
              </tr>
            </thead>
            <tbody>
              {p.failed.map((f) => (
                <tr key={`${f.index}-${f.field}`}>
                  <td>{f.index + 2}</td>
                  <td>{f.field}</td>
                  <td>{f.message}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {p.ready > 0 ? (
          <form method="post" action="/contacts/import/confirm">
            <input type="hidden" name="csrf" value={p.signedIn.csrfToken} />
            <input type="hidden" name="csv" value={p.csv} />
            <button type="submit">Import {p.ready} contact(s)</button>{' '}
            <a href="/contacts">Cancel</a>
          </form>
        ) : (
          <p>
            <a href="/contacts">Back to contacts</a>
          </p>
        )}
      </section>
    </Layout>
  );
}

/** The confirmation step of an erasure. */
export function ConfirmErasePage({ signedIn, contact }: { signedIn: SignedIn; contact: Contact }) {
  return (
    <Layout title="Delete contact" signedIn={signedIn}>
      <section>
        <h1>Delete this contact?</h1>
        <p>
          <strong>{contact.phone}</strong> {nameOf(contact)} {contact.email ?? ''}
        </p>
        <p>
          The contact and everything that names them are erased for good (GDPR art. 17). This cannot
          be undone.
        </p>
        <form method="post" action={`/contacts/${contact.id}/delete`}>
          <input type="hidden" name="csrf" value={signedIn.csrfToken} />
          <button type="submit" class="danger">
            Delete for good
          </button>{' '}
          <a href="/contacts">Cancel</a>
        </form>
      </section>
    </Layout>
  );
}
