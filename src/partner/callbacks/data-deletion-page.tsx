/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The human-readable status page of a data deletion request (`GET /data-deletion?code=…`),
 * the URL the provider shows the person after its data-deletion callback.
 */
import { render } from 'preact-render-to-string';
import { Layout } from '../../browser/layout.tsx';
import type { DataDeletionStatus } from './data-deletion.ts';

function when(iso: string): string {
  return `${iso.slice(0, 10)} at ${iso.slice(11, 19)} UTC`;
}

/** The page for a known request, or the "not found" page when `status` is null. */
export function dataDeletionPage(status: DataDeletionStatus | null): string {
  const body = status ? (
    <>
      <h1>Data deletion request</h1>
      <p>
        Confirmation code: <strong>{status.confirmationCode}</strong>
      </p>
      <p>Received on {when(status.requestedAt)}.</p>
      <p>
        {status.completedAt
          ? `Completed on ${when(status.completedAt)}.`
          : 'In progress: come back to this page later.'}
      </p>
      <h2>What was deleted</h2>
      <p>{status.summary}</p>
      <p>
        Portico keeps only a record of this request so that this page can answer: the confirmation
        code, your account id at the provider, and when the request was received and completed.
      </p>
    </>
  ) : (
    <>
      <h1>No such data deletion request</h1>
      <p>
        Check the confirmation code you were given. It is the link the provider showed you after you
        asked for your data to be deleted.
      </p>
    </>
  );
  return `<!doctype html>${render(<Layout title="Data deletion">{body}</Layout>)}`;
}
