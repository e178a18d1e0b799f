/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import { ErrorFlash } from '../../browser/flash.tsx';
import { Actions, Button, Field } from '../../browser/kit.tsx';
import { Layout } from '../../browser/layout.tsx';

export interface LoginPageProps {
  /** Double-submit token matching the sign-in CSRF cookie. */
  csrfToken: string;
  /** Where to go after signing in (already checked to be a same-site path). */
  next: string | null;
  /** Entered email to keep in the form after a failure. */
  email?: string;
  failed?: boolean;
  /** Shown when the visitor was sent here because their session ended. */
  notice?: string | undefined;
  /** Why this attempt was refused before the password was checked (too many attempts). */
  refused?: string | undefined;
}

/** `/login`: email and password. A failure says only that the pair is wrong. */
export function LoginPage({ csrfToken, next, email, failed, notice, refused }: LoginPageProps) {
  return (
    <Layout title="Sign in">
      <section class="narrow">
        <h1>Sign in</h1>
        {notice && (
          <div class="flash flash-info" role="status">
            <p>{notice}</p>
          </div>
        )}
        <ErrorFlash>
          {refused ?? (failed ? 'The email or password is not right.' : undefined)}
        </ErrorFlash>
        <form method="post" action="/login">
          <input type="hidden" name="csrf" value={csrfToken} />
          {next && <input type="hidden" name="next" value={next} />}
          <Field
            id="email"
            name="email"
            label="Email"
            type="email"
            autocomplete="username"
            required
            value={email}
          />
          <Field
            id="password"
            name="password"
            label="Password"
            type="password"
            autocomplete="current-password"
            required
          />
          <Actions>
            <Button>Sign in</Button>
          </Actions>
        </form>
      </section>
    </Layout>
  );
}
