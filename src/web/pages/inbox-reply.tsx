/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The reply box of an open conversation: free text while the person's 24-hour service window
 * is open; once it closed, a choice of the account's approved templates (a GET form) and the
 * send form with one field per variable, as the composer of `/messages` has them. It posts to
 * `/inbox/{id}/reply` with the CSRF token and a fresh `Idempotency-Key`; a refusal stands next
 * to its field with every value kept.
 *
 * @see docs/messaging.md "Inbox"
 */
import { ErrorFlash } from '../../browser/flash.tsx';
import { Actions, Button, EmptyState, Field } from '../../browser/kit.tsx';
import type { ComposerErrors, ComposerForm, ComposerTemplate } from '../message-composer.ts';
import { Variables } from './message-composer.tsx';

/** The reply box as the page shows it. */
export interface ReplyView {
  conversationId: string;
  windowOpen: boolean;
  /** What the account offers (read only when the window is closed). */
  source:
    | { kind: 'not_connected' }
    | { kind: 'unavailable'; message: string }
    | { kind: 'ready'; templates: ComposerTemplate[] };
  /** The chosen template when the window is closed (null: none offered). */
  template: ComposerTemplate | null;
  form: ComposerForm;
  errors: ComposerErrors;
  formError?: string | undefined;
  idempotencyKey: string;
}

function TemplateChoice({ view }: { view: ReplyView }) {
  if (view.source.kind !== 'ready') return null;
  return (
    <form
      method="get"
      action={`/inbox/${view.conversationId}#reply`}
      class="filters choice"
      aria-label="Which template"
    >
      <Field
        name="compose"
        id="r-compose"
        label="Template"
        value={view.template?.id}
        error={view.errors.compose}
        options={view.source.templates.map((t) => ({
          value: t.id,
          label: `${t.name} (${t.language})`,
        }))}
      />
      <Button kind="secondary">Choose</Button>
    </form>
  );
}

/** The reply card's content (`#reply`). */
export function ReplyBox({ view, csrfToken }: { view: ReplyView; csrfToken: string }) {
  const { template } = view;
  const closed = !view.windowOpen;
  let body;
  if (closed && view.source.kind === 'not_connected')
    body = (
      <EmptyState
        title="Connect your WhatsApp Business account to reply."
        action={{ href: '/connect', label: 'Connect your account' }}
      />
    );
  else if (closed && view.source.kind === 'unavailable')
    body = <p class="error">{view.source.message}</p>;
  else if (closed && !template)
    body = (
      <p class="muted" data-testid="no-template">
        The window is closed and the account has no approved template for this number.
      </p>
    );
  else
    body = (
      <>
        {closed && <TemplateChoice view={view} />}
        <form method="post" action={`/inbox/${view.conversationId}/reply`} data-testid="reply-form">
          <input type="hidden" name="csrf" value={csrfToken} />
          <input type="hidden" name="key" value={view.idempotencyKey} />
          <input type="hidden" name="compose" value={template && closed ? template.id : 'text'} />
          {closed && template ? (
            <>
              <figure class="template-body">
                <figcaption class="muted">Template text</figcaption>
                <blockquote data-testid="template-body">{template.body}</blockquote>
              </figure>
              <Variables template={template} view={view} />
            </>
          ) : (
            <Field
              name="text"
              id="r-text"
              label="Your message"
              rows={3}
              value={view.form.text}
              error={view.errors.text}
              maxLength={4096}
              required
            />
          )}
          <Actions>
            <Button testid="reply-send">{closed ? 'Send template' : 'Send reply'}</Button>
          </Actions>
        </form>
      </>
    );
  return (
    <div id="reply" class="reply" data-testid="reply">
      <h2>Reply</h2>
      {closed && (
        <p class="muted">
          More than 24 hours since they last wrote: only an approved template can reach them.
        </p>
      )}
      <ErrorFlash>{view.formError}</ErrorFlash>
      {body}
    </div>
  );
}
