/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The app shell of every page: head (stylesheet, favicon), a bar with the product name, the
 * navigation with the current page marked (`aria-current="page"`), the signed-in user and the
 * sign-out form; below 900 px the navigation folds into a "Menu" disclosure (`<details>`, no
 * script). The pages work as plain HTML forms; a page may add same-origin script files
 * (`scripts`) that only improve it.
 *
 * @see docs/architecture.md "browser/"
 */
import type { ComponentChildren } from 'preact';

/** The navigation's entries, in order: key → [path, label]. A new page area adds its line here. */
export const NAV = {
  settings: ['/settings', 'Settings'],
  inbox: ['/inbox', 'Inbox'],
  contacts: ['/contacts', 'Contacts'],
  messages: ['/messages', 'Messages'],
  webhooks: ['/settings/webhooks', 'Webhooks'],
  keys: ['/settings/keys', 'API keys'],
  team: ['/settings/team', 'Team'],
  support: ['/support', 'Support'],
  audit: ['/audit', 'Audit log'],
} as const satisfies Record<string, readonly [string, string]>;

/** Which navigation entry a page belongs to (marked as the current page). */
export type NavKey = keyof typeof NAV;

export interface LayoutProps {
  title: string;
  /** When signed in: the CSRF token for the sign-out form and who is signed in. */
  signedIn?: { email: string; csrfToken: string } | undefined;
  /** The navigation entry this page belongs to (none: sign-in, error pages). */
  current?: NavKey | undefined;
  /** Same-origin script paths (`/assets/….js`), loaded deferred; never inline. */
  scripts?: readonly string[] | undefined;
  /** A wider main column (tables of many columns). */
  wide?: boolean | undefined;
  children: ComponentChildren;
}

function NavList({ current }: { current?: NavKey | undefined }) {
  return (
    <ul class="nav">
      {(Object.entries(NAV) as [NavKey, readonly [string, string]][]).map(
        ([key, [href, label]]) => (
          <li key={key}>
            <a href={href} aria-current={key === current ? 'page' : undefined}>
              {label}
            </a>
          </li>
        ),
      )}
    </ul>
  );
}

function User({ signedIn }: { signedIn: { email: string; csrfToken: string } }) {
  return (
    <div class="shell-user">
      <span class="who">{signedIn.email}</span>
      <form method="post" action="/logout">
        <input type="hidden" name="csrf" value={signedIn.csrfToken} />
        <button type="submit" class="secondary">
          Sign out
        </button>
      </form>
    </div>
  );
}

export function Layout({ title, signedIn, current, scripts, wide, children }: LayoutProps) {
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
        <a class="skip" href="#main">
          Skip to the content
        </a>
        <header class="shell-bar">
          <a class="brand" href={signedIn ? '/settings' : '/login'}>
            <img src="/assets/favicon.svg" alt="" width="26" height="26" />
            Portico
          </a>
          {signedIn && (
            <>
              <div class="shell-desktop">
                <nav aria-label="Main">
                  <NavList current={current} />
                </nav>
                <User signedIn={signedIn} />
              </div>
              <details class="menu">
                <summary>Menu</summary>
                <div class="menu-panel">
                  <nav aria-label="Main (menu)">
                    <NavList current={current} />
                  </nav>
                  <User signedIn={signedIn} />
                </div>
              </details>
            </>
          )}
        </header>
        <main id="main" class={wide ? 'wide' : undefined}>
          {children}
        </main>
      </body>
    </html>
  );
}
