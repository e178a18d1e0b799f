/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import { Flash } from '../../browser/flash.tsx';
import { Actions, ButtonLink, Card, PageHeader } from '../../browser/kit.tsx';
import { Layout } from '../../browser/layout.tsx';

/** `/authorized`: the connection is stored (signed-in users only; names who and what). */
export function AuthorizedPage(p: {
  signedIn: { email: string; csrfToken: string };
  portalName: string;
  providerName: string;
}) {
  return (
    <Layout title="Connected" signedIn={p.signedIn} current="settings">
      <PageHeader title={`Your ${p.providerName} account is connected`} />
      <Flash flash={{ key: 'connected' }} />
      <Card title="What next">
        <p data-testid="authorized">
          {p.signedIn.email} connected {p.portalName} to {p.providerName}.
        </p>
        <p>
          Portico can now work with your {p.providerName} account. Settings shows what was shared
          and what Portico may do; Messages sends your first message.
        </p>
        <Actions>
          <ButtonLink href="/settings#connection">See the connection</ButtonLink>
          <ButtonLink href="/messages#composer" kind="secondary">
            Send a message
          </ButtonLink>
        </Actions>
      </Card>
    </Layout>
  );
}
