/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * Flash messages: the one-line outcome a page shows after a redirect (`?done=<key>`). The
 * words come only from the fixed vocabulary below, never from the URL: an unknown key shows
 * nothing, and the only values a URL may add are whole numbers (`?done=contacts_imported&created=3`).
 *
 * @see docs/architecture.md "browser/"
 */

/** Numbers a flash may quote, read from the query (digits only; anything else is ignored). */
export type FlashCounts = Record<string, number>;

interface FlashEntry {
  tone: 'ok' | 'info';
  text: (n: FlashCounts) => string;
}

const n0 = (n: FlashCounts, k: string) => n[k] ?? 0;

/** Every flash a page can show, by key. A new outcome adds its line here. */
export const FLASHES = {
  contact_erased: { tone: 'ok', text: () => 'The contact is erased.' },
  contact_saved: { tone: 'ok', text: () => 'The details are saved.' },
  attributes_saved: { tone: 'ok', text: () => 'The attributes are saved.' },
  contact_message_sent: {
    tone: 'ok',
    text: () => 'The template is queued; the conversation below shows it once it is sent.',
  },
  contacts_imported: {
    tone: 'ok',
    text: (n) =>
      `Imported: ${n0(n, 'created')} created, ${n0(n, 'updated')} updated, ` +
      `${n0(n, 'unchanged')} unchanged, ${n0(n, 'failed')} not imported.`,
  },
  connected: {
    tone: 'ok',
    text: () => 'Your provider account is connected.',
  },
  disconnected: {
    tone: 'ok',
    text: () => 'Your provider account is disconnected and the stored access is deleted.',
  },
  'not-connected': {
    tone: 'info',
    text: () => 'Your provider account was not connected; nothing changed.',
  },
  regenerated: {
    tone: 'info',
    text: () =>
      'The API token was regenerated. Its new value was shown once and is not shown again: ' +
      'if you did not copy it, regenerate it again.',
  },
  webhook_added: {
    tone: 'ok',
    text: () =>
      'The endpoint is added. Its signing secret was shown once and is not shown again: ' +
      'if you did not copy it, rotate the secret.',
  },
  webhook_rotated: {
    tone: 'ok',
    text: () =>
      'The secret is rotated. Its new value was shown once and is not shown again: if you ' +
      'did not copy it, rotate it again.',
  },
  key_created: {
    tone: 'ok',
    text: () =>
      'The API key is created. Its secret was shown once and is not shown again: if you did ' +
      'not copy it, rotate the key.',
  },
  key_rotated: {
    tone: 'ok',
    text: () =>
      'The API key is rotated. Its new secret was shown once and is not shown again: if you ' +
      'did not copy it, rotate it again.',
  },
  key_revoked: { tone: 'ok', text: () => 'The API key is revoked; it no longer works.' },
  replay_started: {
    tone: 'ok',
    text: (n) =>
      `The replay is queued: ${n0(n, 'events')} event(s). Its progress is shown under Replays.`,
  },
  removed: { tone: 'ok', text: () => 'The endpoint and its delivery history are removed.' },
  test: { tone: 'ok', text: () => 'A webhook.test event is queued for the endpoint.' },
  resent: { tone: 'ok', text: () => 'The event is queued again (same webhook-id).' },
  enabled: { tone: 'ok', text: () => 'The endpoint is enabled.' },
  threshold: { tone: 'ok', text: () => 'The credit alert is saved.' },
  messaging_saved: { tone: 'ok', text: () => 'The messaging settings are saved.' },
  onboarding_retried: {
    tone: 'info',
    text: () => 'The onboarding ran again; each number shows where it stands below.',
  },
  onboarding_busy: {
    tone: 'info',
    text: () => 'The onboarding is already running; reload in a moment to see where it stands.',
  },
  onboarding_failed: {
    tone: 'info',
    text: () => 'The onboarding could not run (no active connection, or the provider failed).',
  },
  member_invited: {
    tone: 'ok',
    text: () =>
      'The invitation is made. Its link was shown once and is not shown again: if you did not ' +
      'copy it, invite the same email again for a new link.',
  },
  member_role: { tone: 'ok', text: () => 'The member’s role is changed.' },
  member_disabled: {
    tone: 'ok',
    text: () => 'The member is disabled and signed out everywhere.',
  },
  member_enabled: { tone: 'ok', text: () => 'The member can sign in again.' },
  member_removed: {
    tone: 'ok',
    text: () => 'The member is removed and signed out everywhere.',
  },
  availability: { tone: 'ok', text: () => 'Your availability is saved.' },
  message_sent: {
    tone: 'ok',
    text: () => 'The message is queued. Its status appears in the log below.',
  },
} as const satisfies Record<string, FlashEntry>;

export type FlashKey = keyof typeof FLASHES;

/** The flash of `?done=<key>` and its counts, or null for an absent or unknown key. */
export function flashOf(
  query: Record<string, unknown>,
): { key: FlashKey; counts: FlashCounts } | null {
  const key = query.done;
  if (typeof key !== 'string' || !Object.hasOwn(FLASHES, key)) return null;
  const counts: FlashCounts = {};
  for (const [k, v] of Object.entries(query))
    if (typeof v === 'string' && /^\d{1,9}$/.test(v)) counts[k] = Number(v);
  return { key: key as FlashKey, counts };
}

/** The words of a flash (for a test, or a page that shows it elsewhere). */
export function flashText(key: FlashKey, counts: FlashCounts = {}): string {
  const entry: FlashEntry = FLASHES[key];
  return entry.text(counts);
}

/**
 * A flash message (role=status), or nothing. `link` is the page's own (the thing the outcome
 * concerns, which the page found itself), never an address taken from the URL.
 */
export function Flash(p: {
  flash?: { key: FlashKey; counts?: FlashCounts | undefined } | null | undefined;
  link?: { href: string; label: string } | undefined;
}) {
  if (!p.flash) return null;
  const entry: FlashEntry = FLASHES[p.flash.key];
  return (
    <div class={`flash flash-${entry.tone}`} role="status" data-testid="notice">
      <p>
        {entry.text(p.flash.counts ?? {})}
        {p.link && (
          <>
            {' '}
            <a href={p.link.href} data-testid="notice-link">
              {p.link.label}
            </a>
          </>
        )}
      </p>
    </div>
  );
}

/** An error message at the top of a form or page (role=alert), from the code that found it. */
export function ErrorFlash({ children }: { children: string | undefined }) {
  if (!children) return null;
  return (
    <div class="flash flash-bad" role="alert" data-testid="error">
      <p>{children}</p>
    </div>
  );
}
