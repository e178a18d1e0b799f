/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The composer card of `/messages`: a GET form that chooses what to send (an approved template
 * of the account, or free text), then the send form for that choice: the sender number, the
 * recipient (a contact or a phone number), one field per template variable or the text. A
 * refusal stands next to its field with every value kept; without a connection, the card says
 * to connect and links to `/connect`.
 *
 * @see docs/messaging.md "Sending"
 */
import { ErrorFlash } from '../../browser/flash.tsx';
import { Actions, Button, Card, EmptyState, Field } from '../../browser/kit.tsx';
import {
  sendersOf,
  TEXT_CHOICE,
  type ComposerTemplate,
  type ComposerView,
} from '../message-composer.ts';

const WINDOW_HELP =
  'Free text reaches only people who wrote to this sender number in the last 24 hours; ' +
  'anyone else needs an approved template.';

/** The choice of what to send (a GET: it only changes which send form is shown). */
function Choice(p: { templates: ComposerTemplate[]; chosen: string; error?: string | undefined }) {
  return (
    <form method="get" action="/messages#composer" class="filters choice" aria-label="What to send">
      <Field
        name="compose"
        id="c-compose"
        label="What to send"
        value={p.chosen}
        error={p.error}
        help={p.templates.length === 0 ? 'The account has no approved template yet.' : undefined}
        options={[
          ...p.templates.map((t) => ({
            value: t.id,
            label: `Template ${t.name} (${t.language}) · WABA ${t.wabaId}`,
          })),
          { value: TEXT_CHOICE, label: 'Free text (inside the 24-hour window)' },
        ]}
      />
      <Button kind="secondary">Choose</Button>
    </form>
  );
}

/** The chosen template's text, quoted. */
export function TemplateBody({ template }: { template: ComposerTemplate }) {
  return (
    <figure class="template-body">
      <figcaption class="muted">Template text</figcaption>
      <blockquote data-testid="template-body">{template.body}</blockquote>
    </figure>
  );
}

/** The sender number: the account's numbers that may send `template` (all for free text). */
export function FromField(p: {
  id: string;
  numbers: Parameters<typeof sendersOf>[0];
  template: ComposerTemplate | null;
  view: Pick<ComposerView, 'form' | 'errors'>;
}) {
  return (
    <Field
      name="from"
      id={p.id}
      label="From"
      value={p.view.form.from}
      error={p.view.errors.from}
      options={sendersOf(p.numbers, p.template).map((n) => ({
        value: n.id,
        label: `${n.displayPhoneNumber} · ${n.verifiedName}`,
      }))}
    />
  );
}

/** One field per variable of `template` ({{1}} … {{n}}), with the values typed and errors. */
export function Variables({
  template,
  view,
}: {
  template: ComposerTemplate;
  view: Pick<ComposerView, 'form' | 'errors'>;
}) {
  if (template.variables === 0) return <p class="muted">This template has no variables.</p>;
  return (
    <fieldset>
      <legend>Variables</legend>
      {Array.from({ length: template.variables }, (_, i) => {
        const n = i + 1;
        const example = template.examples[i];
        return (
          <Field
            key={n}
            name="parameter"
            id={`c-parameter-${n}`}
            label={`{{${n}}}`}
            value={view.form.parameters[i]}
            error={view.errors[`parameter-${n}`]}
            help={example ? `For example: ${example}` : undefined}
            maxLength={1024}
            required
          />
        );
      })}
    </fieldset>
  );
}

function SendForm({ view, csrfToken }: { view: ComposerView; csrfToken: string }) {
  if (view.source.kind !== 'ready') return null;
  const { template, form, errors } = view;
  return (
    <form method="post" action="/messages/send" data-testid="composer-form">
      <input type="hidden" name="csrf" value={csrfToken} />
      <input type="hidden" name="compose" value={template ? template.id : TEXT_CHOICE} />
      <input type="hidden" name="key" value={view.idempotencyKey} />
      {template && <TemplateBody template={template} />}
      <FromField id="c-from" numbers={view.source.numbers} template={template} view={view} />
      <fieldset>
        <legend>To</legend>
        <div class="grid-2">
          <Field
            name="contactId"
            id="c-contact"
            label="A contact"
            value={form.contactId}
            error={errors.contactId}
            help="Contacts who opted out are not listed."
            options={[
              { value: '', label: '(none: the number below)' },
              ...view.source.contacts.map((c) => ({ value: c.id, label: c.label })),
            ]}
          />
          <Field
            name="to"
            id="c-to"
            label="Or a phone number"
            type="tel"
            value={form.to}
            error={errors.to}
            help="In international form, with the country code."
            placeholder="+44 20 7946 0958"
            autocomplete="off"
            maxLength={40}
          />
        </div>
      </fieldset>
      {template ? (
        <Variables template={template} view={view} />
      ) : (
        <Field
          name="text"
          id="c-text"
          label="Text"
          rows={4}
          value={form.text}
          error={errors.text}
          help={WINDOW_HELP}
          maxLength={4096}
          required
        />
      )}
      <Actions>
        <Button testid="send">{template ? 'Send template' : 'Send text'}</Button>
        <span class="muted">Its price is held from the credit until it is sent.</span>
      </Actions>
    </form>
  );
}

/** The composer card (`#composer`). */
export function Composer({ view, csrfToken }: { view: ComposerView; csrfToken: string }) {
  const { source } = view;
  return (
    <Card title="Send a message" id="composer" testid="composer">
      {source.kind === 'not_connected' ? (
        <EmptyState
          title="Connect your WhatsApp Business account to send messages."
          action={{ href: '/connect', label: 'Connect your account' }}
          testid="composer-not-connected"
        >
          Messages go out from the phone numbers of the business account you connect.
        </EmptyState>
      ) : source.kind === 'unavailable' ? (
        <p class="error" data-testid="composer-error">
          {source.message}
        </p>
      ) : source.numbers.length === 0 ? (
        <EmptyState
          title="The connected account has no phone number to send from."
          action={{ href: '/settings#connection', label: 'See the connection' }}
        />
      ) : (
        <>
          <ErrorFlash>{view.formError}</ErrorFlash>
          <Choice
            templates={source.templates}
            chosen={view.template ? view.template.id : TEXT_CHOICE}
            error={view.errors.compose}
          />
          <SendForm view={view} csrfToken={csrfToken} />
        </>
      )}
    </Card>
  );
}
