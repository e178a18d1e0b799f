/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/** `/agent/login`: a support agent's email and password. A failure says only that the pair is wrong. */
import { AgentFrame } from './agent-pages.tsx';

export function AgentLoginPage(props: {
  csrfToken: string;
  email?: string;
  failed?: boolean;
  notice?: string | undefined;
}) {
  return (
    <AgentFrame title="Agent sign-in">
      <section>
        <h1>Support agent sign-in</h1>
        {props.notice && <p class="muted">{props.notice}</p>}
        {props.failed && (
          <p class="error" role="alert">
            The email or password is not right.
          </p>
        )}
        <form method="post" action="/agent/login">
          <input type="hidden" name="csrf" value={props.csrfToken} />
          <label for="email">Email</label>
          <input
            id="email"
            name="email"
            type="email"
            autocomplete="username"
            required
            value={props.email ?? ''}
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
    </AgentFrame>
  );
}
