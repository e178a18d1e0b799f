/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import { Layout } from './layout.tsx';

/** A short page that explains a refusal (expired form, not allowed) and where to go next. */
export function MessagePage({
  title,
  children,
  signedIn,
}: {
  title: string;
  children: ComponentChildren;
  signedIn?: { email: string; csrfToken: string } | undefined;
}) {
  return (
    <Layout title={title} signedIn={signedIn}>
      <section class="message-page">
        <h1>{title}</h1>
        {children}
      </section>
    </Layout>
  );
}
