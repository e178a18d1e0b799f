/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The sandbox provider's pages, rendered with preact (auto-escaping): the authorization dialog,
 * the "your apps" settings page with remove / delete data / revoke buttons, and a result page.
 */
import type { ComponentChildren } from 'preact';
import { render } from 'preact-render-to-string';
import type { Grant } from './sandbox-state.ts';

const STYLE = `
body{font-family:system-ui,sans-serif;background:#f0f2f5;margin:0;color:#1c1e21}
main{max-width:34rem;margin:3rem auto;background:#fff;border-radius:8px;padding:1.5rem 2rem;box-shadow:0 1px 3px #0003}
h1{font-size:1.3rem}.banner{background:#fff3cd;padding:.5rem 1rem;text-align:center;font-size:.9rem}
button{font-size:1rem;padding:.5rem 1.2rem;margin:.3rem .3rem 0 0;border-radius:6px;border:1px solid #ccd}
button.primary{background:#1877f2;color:#fff;border-color:#1877f2}
label{display:block;margin:.4rem 0}code{background:#eee;padding:0 .2rem}
table{border-collapse:collapse;width:100%}td{padding:.3rem;border-top:1px solid #eee;vertical-align:top}
`;

export function Layout(props: { title: string; children: ComponentChildren }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{props.title}</title>
        <style>{STYLE}</style>
      </head>
      <body>
        <div class="banner">
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

/** The person's "apps and websites" settings: each grant with the revocation actions. */
export function AppsPage(p: { grants: (Grant & { appName: string; tokens: number })[] }) {
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
