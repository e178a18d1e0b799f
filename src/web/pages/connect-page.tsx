/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import { Layout } from '../../browser/layout.tsx';

/**
 * `/connect`: what connecting gives, and one form that posts the consent confirmation. It holds
 * no app identity: the server builds the authorization address after the consent.
 *
 * @see docs/partner-connection.md "The authorization-code flow"
 */
export function ConnectPage({
  email,
  csrfToken,
  refused,
  isMainAdmin,
  providerName,
  reconnect = false,
}: {
  /** The provider as the pages name it ("Meta"). */
  providerName: string;
  /** Reached from Reconnect: the new connection replaces the current one in place. */
  reconnect?: boolean;
  email: string;
  csrfToken: string;
  /** Only the main administrator gets the form; others are told who can connect. */
  isMainAdmin: boolean;
  /** Set when start sent the visitor back (no recent consent). */
  refused?: boolean;
}) {
  return (
    <Layout
      title={reconnect ? `Reconnect ${providerName}` : `Connect ${providerName}`}
      signedIn={{ email, csrfToken }}
      current="settings"
    >
      <section>
        <h1>
          {reconnect
            ? `Reconnect your ${providerName} account`
            : `Connect your ${providerName} account`}
        </h1>
        {reconnect && (
          <p class="warning" data-testid="reconnect-note">
            The new connection replaces the current one in place, for example to share another
            business account. The current connection keeps working until the new one is made; if you
            cancel at {providerName}, nothing changes.
          </p>
        )}
        {refused && (
          <p class="error" role="alert">
            Please confirm below to start connecting.
          </p>
        )}
        <p>
          Connecting lets Portico act for your business at the provider: send and receive messages,
          and read the business assets you choose. You will be taken to {providerName} to sign in
          there and choose what to allow; Portico never sees your {providerName} password.
        </p>
        <p class="muted">
          The access the provider gives is stored encrypted. You can disconnect at any time from
          Settings, or remove Portico in your provider account settings.
        </p>
        {isMainAdmin ? (
          <form method="post" action="/api/auth/partner/consent">
            <input type="hidden" name="csrf" value={csrfToken} />
            <button type="submit">Continue to {providerName}</button>
          </form>
        ) : (
          <p class="error" role="alert" data-testid="not-admin">
            Only the main administrator of this portal can connect or disconnect the provider
            account. Ask them to connect it.
          </p>
        )}
        <p>
          <a href="/settings">Back to settings</a>
        </p>
      </section>
    </Layout>
  );
}
