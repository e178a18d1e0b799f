/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import { ErrorFlash } from '../../browser/flash.tsx';
import { Actions, Button, ButtonLink, Card, Note, PageHeader } from '../../browser/kit.tsx';
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
  /** Only an administrator gets the form; others are told who can connect. */
  isMainAdmin: boolean;
  /** Set when start sent the visitor back (no recent consent). */
  refused?: boolean;
}) {
  const back = (
    <ButtonLink href="/settings" kind="secondary">
      Back to settings
    </ButtonLink>
  );
  return (
    <Layout
      title={reconnect ? `Reconnect ${providerName}` : `Connect ${providerName}`}
      signedIn={{ email, csrfToken }}
      current="settings"
    >
      <PageHeader
        title={
          reconnect
            ? `Reconnect your ${providerName} account`
            : `Connect your ${providerName} account`
        }
        lead="Portico sends and receives your business's WhatsApp messages through it."
      />
      {refused && <ErrorFlash>Please confirm below to start connecting.</ErrorFlash>}
      {reconnect && (
        <Note testid="reconnect-note">
          <p>
            The new connection replaces the current one in place, for example to share another
            business account. The current connection keeps working until the new one is made; if you
            cancel at {providerName}, nothing changes.
          </p>
        </Note>
      )}
      <Card title="What connecting does">
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
          <form method="post" action="/api/auth/partner/consent" class="actions">
            <input type="hidden" name="csrf" value={csrfToken} />
            <Button>Continue to {providerName}</Button>
            {back}
          </form>
        ) : (
          <>
            <Note tone="bad" testid="not-admin">
              <p>
                Only an administrator of this portal can connect or disconnect the provider account.
                Ask them to connect it.
              </p>
            </Note>
            <Actions>{back}</Actions>
          </>
        )}
      </Card>
    </Layout>
  );
}
