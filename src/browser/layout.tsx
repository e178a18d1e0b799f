/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The frame of every page: head, a header with the sign-out form when signed in, and the main
 * content. No script: the pages work as plain HTML forms.
 */
import type { ComponentChildren } from 'preact';

export interface LayoutProps {
  title: string;
  /** When signed in: the CSRF token for the sign-out form and who is signed in. */
  signedIn?: { email: string; csrfToken: string } | undefined;
  children: ComponentChildren;
}

export function Layout({ title, signedIn, children }: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{`${title} · Portico`}</title>
        <link rel="stylesheet" href="/assets/portico.css" />
      </head>
      <body>
        <header>
          <a class="brand" href={signedIn ? '/settings' : '/login'}>
            Portico
          </a>
          {signedIn && (
            <form method="post" action="/logout">
              <a href="/settings">Settings</a> <a href="/contacts">Contacts</a>{' '}
              <a href="/messages">Messages</a> <span class="muted">{signedIn.email} </span>
              <input type="hidden" name="csrf" value={signedIn.csrfToken} />
              <button type="submit" class="secondary">
                Sign out
              </button>
            </form>
          )}
        </header>
        <main>{children}</main>
      </body>
    </html>
  );
}
