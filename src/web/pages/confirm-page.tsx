/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The confirmation step of a destructive action: what will stop working, then one form that
 * does it and a way back that does nothing. No script: a plain page with a plain form.
 */
import type { ComponentChildren } from 'preact';
import { Layout } from '../../browser/layout.tsx';

export function ConfirmPage(p: {
  title: string;
  signedIn: { email: string; csrfToken: string };
  /** Where the confirmed form posts (with `csrf` and `confirm=yes`). */
  action: string;
  /** The button's words ("Regenerate token"). */
  confirmLabel: string;
  children: ComponentChildren;
}) {
  return (
    <Layout title={p.title} signedIn={p.signedIn}>
      <section>
        <h1>{p.title}</h1>
        {p.children}
        <form method="post" action={p.action} class="actions">
          <input type="hidden" name="csrf" value={p.signedIn.csrfToken} />
          <input type="hidden" name="confirm" value="yes" />
          <button type="submit" class="danger" data-testid="confirm">
            {p.confirmLabel}
          </button>
          <a href="/settings">Cancel, keep everything as it is</a>
        </form>
      </section>
    </Layout>
  );
}
