/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import { Layout } from '../../browser/layout.tsx';

/** `/authorized`: the connection is stored. */
export function AuthorizedPage() {
  return (
    <Layout title="Connected">
      <section>
        <h1>Your provider account is connected</h1>
        <p class="ok">Portico can now work with your provider account.</p>
        <p>
          <a class="button" href="/settings">
            Go to settings
          </a>
        </p>
      </section>
    </Layout>
  );
}
