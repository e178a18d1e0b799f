/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/invite/{token}`: the page an invitation link opens. A valid link asks for a password (twice,
 * the sign-in's rules) and signs the new member in; an expired, used or unknown link says so and
 * who can make a new one.
 *
 * @see docs/how-to/work-the-inbox-as-a-team.md
 */
import { ErrorFlash } from '../../browser/flash.tsx';
import { Actions, Button, Field } from '../../browser/kit.tsx';
import { Layout } from '../../browser/layout.tsx';
import { MessagePage } from '../../browser/message-page.tsx';
import { PASSWORD_MIN_LENGTH } from '../../platform/passwords.ts';

export interface InvitationPageProps {
  /** The link's path (`/invite/…`), where the form posts. */
  action: string;
  /** Double-submit token matching the sign-in CSRF cookie. */
  csrfToken: string;
  email: string;
  portalName: string;
  role: 'admin' | 'agent';
  /** Why the password was refused (the link still works). */
  error?: string | undefined;
}

/** A valid link: choose a password. */
export function InvitationPage(p: InvitationPageProps) {
  return (
    <Layout title="Join the team">
      <section class="narrow">
        <h1>Join {p.portalName}</h1>
        <p>
          You are invited as {p.role === 'admin' ? 'an administrator' : 'an agent'}. Choose a
          password to sign in as <strong>{p.email}</strong>.
        </p>
        <ErrorFlash>{p.error}</ErrorFlash>
        <form method="post" action={p.action}>
          <input type="hidden" name="csrf" value={p.csrfToken} />
          <input type="hidden" name="email" value={p.email} autocomplete="username" />
          <Field
            id="password"
            name="password"
            label="Password"
            type="password"
            autocomplete="new-password"
            required
            help={`At least ${PASSWORD_MIN_LENGTH} characters.`}
          />
          <Field
            id="password2"
            name="password2"
            label="The same password again"
            type="password"
            autocomplete="new-password"
            required
          />
          <Actions>
            <Button testid="accept">Set password and sign in</Button>
          </Actions>
        </form>
      </section>
    </Layout>
  );
}

/** A link that works no more (or never did): nothing to do here but ask for a new one. */
export function InvitationGonePage({ expired }: { expired: boolean }) {
  return (
    <MessagePage
      title={expired ? 'This invitation has expired' : 'This invitation link does not work'}
    >
      <p>
        {expired
          ? 'Invitation links work for 7 days.'
          : 'It has been used already, replaced by a newer invitation, or was copied incompletely.'}{' '}
        Ask an administrator of the portal to invite you again; if you already set a password,{' '}
        <a href="/login">sign in</a>.
      </p>
    </MessagePage>
  );
}
