/** @jsxRuntime automatic */
/** @jsxImportSource preact */
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
}

/** `/login`: email and password. A failure says only that the pair is wrong. */
export function LoginPage({ csrfToken, next, email, failed, notice }: LoginPageProps) {
  return (
    <Layout title="Sign in">
      <section>
        <h1>Sign in</h1>
        {notice && <p class="muted">{notice}</p>}
        {failed && (
          <p class="error" role="alert">
            The email or password is not right.
          </p>
        )}
        <form method="post" action="/login">
          <input type="hidden" name="csrf" value={csrfToken} />
          {next && <input type="hidden" name="next" value={next} />}
          <label for="email">Email</label>
          <input
            id="email"
            name="email"
            type="email"
            autocomplete="username"
            required
            value={email ?? ''}
          />
          <label for="password">Password</label>
          <input
            id="password"
            name="password"
            type="password"
            autocomplete="current-password"
            required
          />
          <button type="submit">Sign in</button>
        </form>
      </section>
    </Layout>
  );
}
