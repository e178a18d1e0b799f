/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import { Actions, ButtonLink, Card, Note, PageHeader } from '../../browser/kit.tsx';
import { Layout } from '../../browser/layout.tsx';
import type { AuthorizationFailure } from '../../partner/oauth/authorization-outcome.ts';

const BACK = (
  <ButtonLink href="/settings" kind="secondary">
    Back to settings
  </ButtonLink>
);

const RETRY = (
  <Actions>
    <ButtonLink href="/connect">Try again</ButtonLink>
    {BACK}
  </Actions>
);

const NOT_ADMIN = (
  <>
    <p>
      Only an administrator of this portal can connect or disconnect the provider account. Nothing
      was connected and nothing changed.
    </p>
    <Actions>{BACK}</Actions>
  </>
);

/** `state`: the answer matched no attempt of this browser; names the cookie cause when known. */
function StartAgain({ cookiesMissing, signInUrl }: { cookiesMissing: boolean; signInUrl: string }) {
  return (
    <>
      {cookiesMissing && (
        <Note testid="cause-cookies">
          <p>
            Your browser sent none of Portico's cookies with this answer, so it could not be matched
            to your sign-in. If you signed in at a different address than this one (for example{' '}
            <code>127.0.0.1</code> instead of <code>localhost</code>): a browser keeps sign-ins per
            address, so sign in at <a href={signInUrl}>{signInUrl}</a> and connect from there.
          </p>
        </Note>
      )}
      <p>
        We could not match this answer from the provider to a connection you started here, so we
        ignored it. This happens when the connection took more than ten minutes, was started in
        another browser or tab, your sign-in ended in between, or the link was opened twice.
      </p>
      <p>Nothing was connected. Start again from the beginning.</p>
      {RETRY}
    </>
  );
}

/**
 * `/auth-error`: every failure of the flow lands here with a generic, useful message. Nothing
 * from the provider is shown; for `permission`, the missing capabilities come as plain words
 * from our own catalog.
 *
 * @see docs/partner-connection.md "How an attempt ends"
 */
export function AuthErrorPage({
  reason,
  missingCapabilities,
  cookiesMissing = false,
  signInUrl,
  signedIn,
}: {
  /** null: an unknown reason; the page stays generic. */
  reason: AuthorizationFailure | null;
  missingCapabilities: string[];
  /**
   * The callback came with none of this site's cookies: most likely signed in at another
   * address of Portico (127.0.0.1 vs localhost). The page names that cause first.
   */
  cookiesMissing?: boolean;
  /** APP_BASE_URL's sign-in page, the address to use. */
  signInUrl: string;
  /** The app shell's user when the visitor is signed in (none: a bare page). */
  signedIn?: { email: string; csrfToken: string } | undefined;
}) {
  let title: string;
  let body: ComponentChildren;
  switch (reason) {
    case 'cancelled':
      title = 'Connection cancelled';
      body = (
        <>
          <p>You cancelled at the provider, so nothing was connected. That is fine.</p>
          <p>If you change your mind, you can start again at any time.</p>
          {RETRY}
        </>
      );
      break;
    case 'state':
      title = 'Please start again';
      body = <StartAgain cookiesMissing={cookiesMissing} signInUrl={signInUrl} />;
      break;
    case 'config':
      title = 'The connection is not set up correctly';
      body = (
        <>
          <p>
            The provider refused the connection because of how Portico is registered with it.
            Nothing was connected.
          </p>
          <p>
            <strong>For the administrator:</strong> compare the redirect URI registered in the
            provider's app settings with the <code>PROVIDER_REDIRECT_URI</code> Portico is
            configured with. They must match exactly (scheme, host, port, path and trailing slash,
            with no query). Also check <code>PROVIDER_APP_ID</code> and the app secret.
          </p>
          <Actions>{BACK}</Actions>
        </>
      );
      break;
    case 'permission':
      title = 'Some access was not given';
      body = (
        <>
          <p>
            Portico needs all the access it asked for, and some was not allowed, so nothing was
            connected.
            {missingCapabilities.length > 0 ? ' Without it Portico cannot:' : ''}
          </p>
          {missingCapabilities.length > 0 && (
            <ul>
              {missingCapabilities.map((c) => (
                <li key={c}>{c}</li>
              ))}
            </ul>
          )}
          <p>Start again and leave every permission switched on at the provider.</p>
          {RETRY}
        </>
      );
      break;
    case 'provider':
      title = 'The provider could not complete the connection';
      body = (
        <>
          <p>
            The provider did not complete the connection just now. Nothing was connected. This is
            usually temporary: wait a minute and try again.
          </p>
          {RETRY}
        </>
      );
      break;
    case 'not_admin':
      title = 'Only an administrator can connect';
      body = NOT_ADMIN;
      break;
    case 'storage':
    case null:
      title = 'The connection could not be completed';
      body = (
        <>
          <p>
            Something went wrong on our side and nothing was connected. Please try again in a
            moment; if it keeps happening, contact support.
          </p>
          {RETRY}
        </>
      );
      break;
  }
  return (
    <Layout title={title} signedIn={signedIn} current={signedIn ? 'settings' : undefined}>
      <PageHeader title={title} />
      <Card title="What happened">{body}</Card>
    </Layout>
  );
}
