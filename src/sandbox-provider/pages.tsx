/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The sandbox provider's pages, rendered with preact (auto-escaping): the authorization dialog,
 * the "your apps" settings page with remove / delete data / revoke buttons, and a result page.
 */
import type { ComponentChildren } from 'preact';
import { render } from 'preact-render-to-string';
import type { Grant } from './sandbox-state.ts';

/**
 * The sandbox's own small stylesheet (it may import nothing of Portico's pages): the same
 * design tokens as Portico's page kit (src/browser/stylesheet.ts), so the flow reads as one,
 * and a banner that says this is the sandbox.
 */
const STYLE = `
:root{--c-fg:#1b2230;--c-muted:#586174;--c-line:#d8dde6;--c-bg:#f4f6f9;--c-accent:#1d5bb8;--c-warn:#7a5a00;--c-warn-soft:#fff6d6;--c-warn-line:#e3c766;--s-2:.5rem;--s-3:.75rem;--s-4:1rem;--s-5:1.5rem;--radius:8px}
*{box-sizing:border-box}
body{font:1rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--c-bg);margin:0;color:var(--c-fg)}
main{max-width:40rem;margin:var(--s-5) auto;background:#fff;border:1px solid var(--c-line);border-radius:var(--radius);padding:var(--s-4) var(--s-5)}
h1{font-size:1.35rem;line-height:1.25}h2{font-size:1.1rem}
.banner{background:var(--c-warn-soft);color:var(--c-warn);border-bottom:1px solid var(--c-warn-line);padding:var(--s-2) var(--s-4);text-align:center;font-size:.9rem;font-weight:600}
a{color:var(--c-accent)}
button{font:inherit;font-weight:600;min-height:2.5rem;padding:var(--s-2) var(--s-4);margin:var(--s-2) var(--s-2) 0 0;border-radius:6px;border:1px solid #aeb6c4;background:#fff;color:var(--c-fg);cursor:pointer}
button.primary{background:var(--c-accent);color:#fff;border-color:var(--c-accent)}
label{display:block;margin:var(--s-3) 0}
input:not([type=checkbox]),select{display:block;width:100%;max-width:100%;margin-top:.25rem;padding:var(--s-2) var(--s-3);border:1px solid #aeb6c4;border-radius:6px;font:inherit}
code{background:#eceff3;padding:0 .2rem;overflow-wrap:anywhere}
table{border-collapse:collapse;width:100%;font-size:.9rem}td{padding:var(--s-2);border-top:1px solid var(--c-line);vertical-align:top;overflow-wrap:anywhere}
section{border-top:1px solid var(--c-line);margin-top:var(--s-4)}
.outcome{background:#e2f4e9;border:1px solid #9fd3b4;border-radius:6px;padding:var(--s-2) var(--s-3)}
@media (max-width:639px){main{margin:0;border-radius:0;border-width:0 0 1px;padding:var(--s-3) var(--s-4)}}
`;

/**
 * A sandbox page; `style` adds page-specific rules after the shared stylesheet (the module's
 * own constants, never request data). The rules go into `<style>` as they are: a style
 * element's text is raw text, which the renderer would otherwise escape (`&quot;` breaks the
 * font list). Throws when the rules could end the element.
 */
export function Layout(props: { title: string; style?: string; children: ComponentChildren }) {
  const css = STYLE + (props.style ?? '');
  if (/<\/?style/i.test(css)) throw new Error('A sandbox stylesheet may not contain "<style".');
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{props.title}</title>
        <link rel="icon" href="data:," />
        <style dangerouslySetInnerHTML={{ __html: css }} />
      </head>
      <body>
        <div class="banner" role="note">
          Sandbox provider — a development emulator, not a real provider account.
        </div>
        <main>{props.children}</main>
      </body>
    </html>
  );
}

/** `<!doctype html>` + the rendered page. */
export function page(node: preact.VNode): string {
  return `<!doctype html>${render(node)}`;
}

export interface DialogProps {
  version: string;
  appName: string;
  clientId: string;
  redirectUri: string;
  state: string | undefined;
  configId: string | undefined;
  scope: string | undefined;
  /** The PKCE challenge of the request, repeated in the form. */
  challenge: { codeChallenge: string; codeChallengeMethod: string } | undefined;
  permissions: { name: string; description: string }[];
  userId: string;
}

/** The authorization dialog: Allow, Cancel, and a checkbox per permission to decline one. */
export function DialogPage(p: DialogProps) {
  return (
    <Layout title={`Connect ${p.appName}`}>
      <h1>{p.appName} would like to access your business account</h1>
      <form method="post" action={`/${p.version}/dialog/oauth`}>
        <input type="hidden" name="client_id" value={p.clientId} />
        <input type="hidden" name="redirect_uri" value={p.redirectUri} />
        <input type="hidden" name="response_type" value="code" />
        {p.state !== undefined && <input type="hidden" name="state" value={p.state} />}
        {p.configId !== undefined && <input type="hidden" name="config_id" value={p.configId} />}
        {p.scope !== undefined && <input type="hidden" name="scope" value={p.scope} />}
        {p.challenge !== undefined && (
          <>
            <input type="hidden" name="code_challenge" value={p.challenge.codeChallenge} />
            <input
              type="hidden"
              name="code_challenge_method"
              value={p.challenge.codeChallengeMethod}
            />
          </>
        )}
        <label>
          Signed in to the sandbox as person{' '}
          <input name="user_id" value={p.userId} pattern="[0-9]{1,20}" size={18} />
        </label>
        <p>Choose what {p.appName} may do. Untick a permission to decline it.</p>
        {p.permissions.map((perm) => (
          <label key={perm.name}>
            <input type="checkbox" name="permission" value={perm.name} checked />{' '}
            <code>{perm.name}</code> — {perm.description}
          </label>
        ))}
        <p>
          <button class="primary" type="submit" name="decision" value="allow">
            Allow
          </button>
          <button type="submit" name="decision" value="cancel">
            Cancel
          </button>
        </p>
      </form>
    </Layout>
  );
}

/** What the provider shows when the dialog request itself is wrong (never redirects). */
export function DialogErrorPage(p: { message: string }) {
  return (
    <Layout title="Cannot open the dialog">
      <h1>This link cannot be used</h1>
      <p>{p.message}</p>
    </Layout>
  );
}

/** The person's "apps and websites" settings: each grant with the revocation actions, then
 * `children` (the account signals). */
export function AppsPage(p: {
  grants: (Grant & { appName: string; tokens: number })[];
  children?: ComponentChildren;
}) {
  return (
    <Layout title="Apps and websites">
      <h1>Apps and websites</h1>
      {p.grants.length === 0 ? (
        <p>No app has access to any sandbox person yet. Connect from Portico first.</p>
      ) : (
        <table>
          <tbody>
            {p.grants.map((g) => (
              <tr key={`${g.appId}-${g.userId}`}>
                <td>
                  <strong>{g.appName}</strong> ({g.appId})
                  <br />
                  person {g.userId}; {g.permissions.length} permissions; {g.tokens} live tokens
                </td>
                <td>
                  {(
                    [
                      ['remove', 'Remove the app'],
                      ['delete-data', 'Delete my data'],
                      ['revoke-token', 'Revoke the token'],
                    ] as const
                  ).map(([action, label]) => (
                    <form method="post" action={`/sandbox/grants/${action}`} key={action}>
                      <input type="hidden" name="app_id" value={g.appId} />
                      <input type="hidden" name="user_id" value={g.userId} />
                      <button type="submit">{label}</button>
                    </form>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {p.children}
    </Layout>
  );
}

/** The outcome of an action on the apps page. */
export function ResultPage(p: { title: string; lines: string[]; link?: string }) {
  return (
    <Layout title={p.title}>
      <h1>{p.title}</h1>
      {p.lines.map((line, i) => (
        <p key={i}>{line}</p>
      ))}
      {p.link !== undefined && (
        <p>
          <a href={p.link}>{p.link}</a>
        </p>
      )}
      <p>
        <a href="/sandbox/apps">Back to apps and websites</a>
      </p>
    </Layout>
  );
}
