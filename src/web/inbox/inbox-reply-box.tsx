/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The reply box of an open conversation. While the person's 24-hour service window is open:
 * free text, a file (a multipart form to `/inbox/{id}/attach`), reply buttons or a list, chosen
 * by links (GET, no script). Once it closed, a choice of the account's approved templates (a
 * GET form) and the send form with one field per variable, as the composer of `/messages` has
 * them. A quoted message (`?quote=msg_…`, from a message's "Reply") shows above the form and
 * goes with it as `context`. Every form posts the CSRF token and a fresh `Idempotency-Key`; a
 * refusal stands next to its field with every value kept.
 *
 * @see docs/messaging.md "Inbox"
 */
import { ErrorFlash } from '../../browser/flash.tsx';
import { Quote } from '../../browser/kit-conversation.tsx';
import { Actions, Button, ButtonLink, EmptyState, Field } from '../../browser/kit.tsx';
import { LIMITS, type ReplyMode } from './inbox-compose.ts';
import type { ComposerErrors, ComposerForm, ComposerTemplate } from '../message-composer.ts';
import { Variables } from '../pages/message-composer.tsx';

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
  /** What the open window's box sends (ignored once the window closed). */
  mode: ReplyMode;
  /** Whether a file can be attached (the upload is wired). */
  uploads: boolean;
  /** The message quoted, with its one-line summary. */
  quote?: { messageId: string; summary: string } | undefined;
}

const MODE_WORDS: Record<ReplyMode, string> = {
  text: 'Text',
  file: 'File',
  buttons: 'Buttons',
  list: 'List',
};

/** The box's address for a mode, keeping the quote. */
function boxHref(view: ReplyView, mode: ReplyMode | null): string {
  const q = new URLSearchParams();
  if (mode && mode !== 'text') q.set('compose', mode);
  if (view.quote && mode) q.set('quote', view.quote.messageId);
  const query = q.toString();
  return `/inbox/${view.conversationId}${query ? `?${query}` : ''}#reply`;
}

function Modes({ view }: { view: ReplyView }) {
  const modes = (Object.keys(MODE_WORDS) as ReplyMode[]).filter(
    (m) => m !== 'file' || view.uploads,
  );
  return (
    <nav class="compose-modes" aria-label="What to send">
      {modes.map((m) => (
        <ButtonLink
          key={m}
          href={boxHref(view, m)}
          kind={m === view.mode ? 'primary' : 'secondary'}
          testid={`mode-${m}`}
        >
          {MODE_WORDS[m]}
        </ButtonLink>
      ))}
    </nav>
  );
}

function Quoting({ view }: { view: ReplyView }) {
  if (!view.quote) return null;
  return (
    <div class="quoting" data-testid="quoting">
      <span class="muted">Replying to</span>
      <Quote href={`#m-${view.quote.messageId}`}>{view.quote.summary}</Quote>
      <a href={boxHref({ ...view, quote: undefined }, view.mode)}>Don't quote</a>
    </div>
  );
}

/** The fields of a buttons or list form. */
function RichFields({ view, mode }: { view: ReplyView; mode: 'buttons' | 'list' }) {
  const { form, errors } = view;
  const many = mode === 'buttons' ? LIMITS.buttons : LIMITS.rows;
  const limit = mode === 'buttons' ? LIMITS.buttonTitle : LIMITS.rowTitle;
  const values = (mode === 'buttons' ? form.buttons : form.rows) ?? [];
  return (
    <>
      <Field
        name="text"
        id="r-text"
        label="Your message"
        rows={3}
        value={form.text}
        error={errors.text}
        maxLength={LIMITS.interactiveBody}
        required
      />
      {mode === 'list' && (
        <Field
          name="listButton"
          id="r-list-button"
          label="The button that opens the list"
          value={form.listButton}
          error={errors.listButton}
          maxLength={LIMITS.listButton}
          help={`At most ${LIMITS.listButton} characters, e.g. "See the times".`}
          required
        />
      )}
      <fieldset>
        <legend>{mode === 'buttons' ? 'Reply buttons' : 'Rows'}</legend>
        <p class="help">
          {mode === 'buttons'
            ? `1 to ${many} buttons, each at most ${limit} characters; leave the rest empty.`
            : `1 to ${many} rows, each at most ${limit} characters; leave the rest empty.`}
        </p>
        {Array.from({ length: many }, (_, i) => {
          const field = `${mode === 'buttons' ? 'button' : 'row'}-${i + 1}` as const;
          return (
            <Field
              key={i}
              name={mode === 'buttons' ? 'choice' : 'row'}
              id={`r-${field}`}
              label={`${mode === 'buttons' ? 'Button' : 'Row'} ${i + 1}`}
              value={values[i]}
              error={errors[field]}
              maxLength={limit}
            />
          );
        })}
      </fieldset>
    </>
  );
}

/** The multipart form of a file (caption first: it is read before the file streams). */
function FileForm({ view, csrfToken }: { view: ReplyView; csrfToken: string }) {
  return (
    <form
      method="post"
      action={`/inbox/${view.conversationId}/attach`}
      enctype="multipart/form-data"
      data-testid="attach-form"
    >
      <input type="hidden" name="csrf" value={csrfToken} />
      <input type="hidden" name="key" value={view.idempotencyKey} />
      {view.quote && <input type="hidden" name="context" value={view.quote.messageId} />}
      <Field
        name="caption"
        id="r-caption"
        label="Caption (optional)"
        rows={2}
        value={view.form.caption}
        error={view.errors.caption}
        help="Shown under a photo, a video or a document."
        maxLength={LIMITS.caption}
      />
      <div class="field">
        <label for="r-file">File</label>
        <input
          id="r-file"
          type="file"
          name="file"
          required
          aria-describedby={view.errors.file ? 'r-file-help r-file-error' : 'r-file-help'}
          aria-invalid={view.errors.file ? 'true' : undefined}
        />
        <p class="help" id="r-file-help">
          A photo (JPEG, PNG, up to 5 MB), a video (MP4, up to 16 MB), audio, or a document (up to
          100 MB). It is sent as what its content is, whatever its name says.
        </p>
        {view.errors.file && (
          <p class="field-error" id="r-file-error">
            {view.errors.file}
          </p>
        )}
      </div>
      <Actions>
        <Button testid="attach-send">Send the file</Button>
      </Actions>
    </form>
  );
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
  const rich = !closed && (view.mode === 'buttons' || view.mode === 'list') ? view.mode : null;
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
  else if (!closed && view.mode === 'file' && view.uploads)
    body = (
      <>
        <Modes view={view} />
        <FileForm view={view} csrfToken={csrfToken} />
      </>
    );
  else
    body = (
      <>
        {closed ? <TemplateChoice view={view} /> : <Modes view={view} />}
        <form method="post" action={`/inbox/${view.conversationId}/reply`} data-testid="reply-form">
          <input type="hidden" name="csrf" value={csrfToken} />
          <input type="hidden" name="key" value={view.idempotencyKey} />
          <input
            type="hidden"
            name="compose"
            value={template && closed ? template.id : (rich ?? 'text')}
          />
          {view.quote && <input type="hidden" name="context" value={view.quote.messageId} />}
          {rich ? (
            <RichFields view={view} mode={rich} />
          ) : closed && template ? (
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
            <Button testid="reply-send">
              {closed ? 'Send template' : rich ? `Send the ${rich}` : 'Send reply'}
            </Button>
          </Actions>
        </form>
        {!closed && (
          // Sent by /assets/inbox.js when the agent starts typing a reply: the person sees the
          // business typing (docs/decisions/0057-meta-fidelity.md).
          <form method="post" action={`/inbox/${view.conversationId}/typing`} data-typing hidden>
            <input type="hidden" name="csrf" value={csrfToken} />
          </form>
        )}
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
      <Quoting view={view} />
      {body}
    </div>
  );
}
