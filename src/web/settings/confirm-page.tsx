/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The confirmation pages of `/settings`' destructive actions, on the kit's
 * {@link ConfirmStep}: what will stop working, one form that does it, a way back.
 */
import type { ComponentChildren } from 'preact';
import { ConfirmStep } from '../../browser/kit.tsx';
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
    <Layout title={p.title} signedIn={p.signedIn} current="settings">
      <ConfirmStep
        title={p.title}
        csrfToken={p.signedIn.csrfToken}
        action={p.action}
        confirmLabel={p.confirmLabel}
        cancelHref="/settings"
      >
        {p.children}
      </ConfirmStep>
    </Layout>
  );
}
