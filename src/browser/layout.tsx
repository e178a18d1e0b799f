/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The frame of every page: head (stylesheet, favicon), a header with the navigation and the
 * sign-out form when signed in, and the main content. The pages work as plain HTML forms; a
 * page may add same-origin script files (`scripts`) that only improve it.
 */
import type { ComponentChildren } from 'preact';

export interface LayoutProps {
  title: string;
  /** When signed in: the CSRF token for the sign-out form and who is signed in. */
  signedIn?: { email: string; csrfToken: string } | undefined;
  /** Same-origin script paths (`/assets/….js`), loaded deferred; never inline. */
  scripts?: readonly string[] | undefined;
  /** A wider main column (tables of many columns). */
  wide?: boolean | undefined;
  children: ComponentChildren;
}

export function Layout({ title, signedIn, scripts, wide, children }: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{`${title} · Portico`}</title>
        <link rel="icon" href="/assets/favicon.svg" type="image/svg+xml" />
        <link rel="stylesheet" href="/assets/portico.css" />
        {scripts?.map((src) => (
          <script key={src} src={src} defer />
        ))}
      </head>
      <body>
        <header>
          <a class="brand" href={signedIn ? '/settings' : '/login'}>
            Portico
          </a>
          {signedIn && (
            <nav>
              <a href="/settings">Settings</a>
              <a href="/contacts">Contacts</a>
              <a href="/messages">Messages</a>
              <a href="/support">Support</a>
              <a href="/audit">Audit log</a>
              <form method="post" action="/logout">
                <span class="muted who">{signedIn.email}</span>
                <input type="hidden" name="csrf" value={signedIn.csrfToken} />
                <button type="submit" class="secondary">
                  Sign out
                </button>
              </form>
            </nav>
          )}
        </header>
        <main class={wide ? 'wide' : undefined}>{children}</main>
      </body>
    </html>
  );
}
