/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import { Layout } from '../../browser/layout.tsx';

/** `/authorized`: the connection is stored (signed-in users only; names who and what). */
export function AuthorizedPage(p: {
  signedIn: { email: string; csrfToken: string };
  portalName: string;
  providerName: string;
}) {
  return (
    <Layout title="Connected" signedIn={p.signedIn} current="settings">
      <section>
        <h1>Your {p.providerName} account is connected</h1>
        <p class="ok" data-testid="authorized">
          {p.signedIn.email} connected {p.portalName} to {p.providerName}.
        </p>
        <p>
          Portico can now work with your {p.providerName} account. Settings shows what was shared
          and what Portico may do.
        </p>
        <p>
          <a class="button" href="/settings#connection">
            See the connection
          </a>
        </p>
      </section>
    </Layout>
  );
}
