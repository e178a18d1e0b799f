/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The page kit: the components every page renders from, inside the app shell
 * ({@link Layout} in layout.tsx). Styles live in stylesheet.ts (classes named here); no inline
 * style and no script, so the Content Security Policy stays strict.
 *
 * - {@link PageHeader}: the page's h1, a one-line lead and its main actions.
 * - {@link Card}: a titled `<section>`.
 * - {@link DataTable}: a table on a wide screen, one stacked card per row below 640 px; short
 *   values never break inside a word, `long` columns (ids, URLs) wrap anywhere.
 * - {@link Field}: a labelled input/select/textarea with help text, its error next to it
 *   (`aria-invalid`, `aria-describedby`) and the value kept on error.
 * - {@link Button}, {@link ButtonLink}, {@link PostButton}, {@link Actions}: primary,
 *   secondary and danger buttons, spaced.
 * - {@link Badge}: a status word in a colour of its tone.
 * - {@link EmptyState}: what is missing and the link that fixes it.
 * - {@link Note}: a highlighted paragraph of the page itself (a caution, an explanation), not
 *   an outcome (those are flashes).
 * - {@link Flash} (flash.ts): a message from a fixed vocabulary.
 * - {@link ConfirmStep}: the confirmation every destructive action goes through.
 *
 * @see docs/architecture.md "browser/"
 */
import type { ComponentChildren } from 'preact';

/** The page's heading, an optional lead sentence and the page's main actions. */
export function PageHeader(p: {
  title: string;
  lead?: ComponentChildren;
  actions?: ComponentChildren;
}) {
  return (
    <div class="page-header">
      <div>
        <h1>{p.title}</h1>
        {p.lead && <p>{p.lead}</p>}
      </div>
      {p.actions && <div class="row-actions">{p.actions}</div>}
    </div>
  );
}

/** A titled card (`<section>`); `actions` sit beside the title. */
export function Card(p: {
  title?: string | undefined;
  id?: string | undefined;
  testid?: string | undefined;
  actions?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <section id={p.id} data-testid={p.testid} aria-label={p.title ? undefined : 'Card'}>
      {(p.title || p.actions) && (
        <div class="card-head">
          {p.title && <h2>{p.title}</h2>}
          {p.actions && <div class="row-actions">{p.actions}</div>}
        </div>
      )}
      {p.children}
    </section>
  );
}

/** One column of a {@link DataTable}. */
export interface Column<T> {
  /** The header, also the row-card label on a phone. */
  label: string;
  cell: (row: T) => ComponentChildren;
  /**
   * `short` (default): words never break, the cell keeps its width; `long`: ids, URLs and
   * free text that may wrap anywhere.
   */
  kind?: 'short' | 'long' | 'text';
}

/** A table of `rows` that becomes one card per row below 640 px (labels from the headers). */
export function DataTable<T>(p: {
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string;
  /** An `id` for a row (a link target), when it has one. */
  rowId?: ((row: T) => string | undefined) | undefined;
  testid?: string | undefined;
  caption?: string | undefined;
}) {
  return (
    <div class="table-wrap">
      <table class="data" data-testid={p.testid}>
        {p.caption && <caption class="muted">{p.caption}</caption>}
        <thead>
          <tr>
            {p.columns.map((c) => (
              <th key={c.label} scope="col">
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {p.rows.map((row) => (
            <tr key={p.rowKey(row)} id={p.rowId?.(row)}>
              {p.columns.map((c) => (
                <td key={c.label} data-label={c.label} class={c.kind ?? 'short'}>
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The input attributes a {@link Field} passes on. */
interface FieldInput {
  type?:
    'text' | 'email' | 'password' | 'url' | 'number' | 'date' | 'datetime-local' | 'tel' | 'search';
  maxLength?: number;
  required?: boolean;
  placeholder?: string;
  autocomplete?: string;
  pattern?: string;
  min?: number;
  inputMode?: 'numeric' | 'tel' | 'text';
}

/**
 * A labelled form field. `error` is shown under the field and the input is marked invalid;
 * `value` is what the person typed (kept when the form comes back with an error).
 * `options` makes it a `<select>`, `rows` a `<textarea>`.
 */
export function Field(
  p: {
    name: string;
    label: ComponentChildren;
    id?: string | undefined;
    value?: string | undefined;
    help?: ComponentChildren;
    error?: string | undefined;
    options?: { value: string; label: string }[] | undefined;
    rows?: number | undefined;
  } & FieldInput,
) {
  const { name, label, value, help, error, options, rows, ...input } = p;
  const id = p.id ?? `f-${name}`;
  const described =
    [help ? `${id}-help` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  const common = {
    id,
    name,
    'aria-invalid': error ? ('true' as const) : undefined,
    'aria-describedby': described,
  };
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {options ? (
        <select {...common}>
          {options.map((o) => (
            <option key={o.value} value={o.value} selected={o.value === (value ?? '')}>
              {o.label}
            </option>
          ))}
        </select>
      ) : rows ? (
        <textarea {...common} rows={rows} maxLength={input.maxLength} required={input.required}>
          {value ?? ''}
        </textarea>
      ) : (
        <input
          // preact types `<input>` as a union keyed by `type`; every type here takes these.
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- preact types a bare input's type narrower than the union this field passes
          type={(input.type ?? 'text') as 'text'}
          maxLength={input.maxLength}
          required={input.required}
          placeholder={input.placeholder}
          autocomplete={input.autocomplete}
          pattern={input.pattern}
          min={input.min}
          inputMode={input.inputMode}
          {...common}
          value={value ?? ''}
        />
      )}
      {help && (
        <p class="help" id={`${id}-help`}>
          {help}
        </p>
      )}
      {error && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

export type ButtonKind = 'primary' | 'secondary' | 'danger';
const buttonClass = (kind: ButtonKind | undefined) =>
  kind && kind !== 'primary' ? kind : undefined;

/** A submit button of a kind (primary by default). */
export function Button(p: {
  kind?: ButtonKind | undefined;
  testid?: string | undefined;
  name?: string | undefined;
  value?: string | undefined;
  children: ComponentChildren;
}) {
  return (
    <button
      type="submit"
      class={buttonClass(p.kind)}
      data-testid={p.testid}
      name={p.name}
      value={p.value}
    >
      {p.children}
    </button>
  );
}

/** A link that looks like a button (a GET: navigation, or the way to a confirmation step). */
export function ButtonLink(p: {
  href: string;
  kind?: ButtonKind | undefined;
  testid?: string | undefined;
  children: ComponentChildren;
}) {
  const kind = buttonClass(p.kind);
  return (
    <a class={kind ? `button ${kind}` : 'button'} href={p.href} data-testid={p.testid}>
      {p.children}
    </a>
  );
}

/**
 * A one-button form that posts (with the CSRF token) to `action`. Not for destructive
 * actions: those link to a {@link ConfirmStep} page.
 */
export function PostButton(p: {
  action: string;
  csrf: string;
  kind?: ButtonKind | undefined;
  children: ComponentChildren;
}) {
  return (
    <form method="post" action={p.action}>
      <input type="hidden" name="csrf" value={p.csrf} />
      <Button kind={p.kind ?? 'secondary'}>{p.children}</Button>
    </form>
  );
}

/** A row of buttons and links with room between them. */
export function Actions({ children }: { children: ComponentChildren }) {
  return <div class="actions">{children}</div>;
}

export type Tone = 'ok' | 'bad' | 'warn' | 'info' | 'neutral';

/** A status word; the tone gives its colour (the word alone carries the meaning). */
export function Badge(p: {
  tone?: Tone | undefined;
  testid?: string;
  children: ComponentChildren;
}) {
  return (
    <span class={`badge badge-${p.tone ?? 'neutral'}`} data-testid={p.testid}>
      {p.children}
    </span>
  );
}

/** What is missing, and the next step as a link. */
export function EmptyState(p: {
  title: string;
  children?: ComponentChildren;
  action?: { href: string; label: string } | undefined;
  testid?: string | undefined;
}) {
  return (
    <div class="empty" data-testid={p.testid}>
      <p>
        <strong>{p.title}</strong>
      </p>
      {p.children && <p>{p.children}</p>}
      {p.action && <ButtonLink href={p.action.href}>{p.action.label}</ButtonLink>}
    </div>
  );
}

/** A highlighted note of the page: `warn` for a caution, `bad` for a refusal (role=alert). */
export function Note(p: {
  tone?: 'warn' | 'bad' | undefined;
  testid?: string | undefined;
  children: ComponentChildren;
}) {
  const bad = p.tone === 'bad';
  return (
    <div
      class={bad ? 'flash flash-bad' : 'note'}
      role={bad ? 'alert' : undefined}
      data-testid={p.testid}
    >
      {p.children}
    </div>
  );
}

/**
 * The confirmation step of a destructive action: what will change, one form that does it
 * (posting `csrf` and `confirm=yes` to `action`, whose route sends an unconfirmed form back
 * here) and a way back that does nothing.
 */
export function ConfirmStep(p: {
  title: string;
  csrfToken: string;
  action: string;
  confirmLabel: string;
  cancelHref: string;
  cancelLabel?: string | undefined;
  /** Choices the action takes (fields posted with the confirmation), above its buttons. */
  fields?: ComponentChildren;
  children: ComponentChildren;
}) {
  const buttons = (
    <>
      <input type="hidden" name="csrf" value={p.csrfToken} />
      <input type="hidden" name="confirm" value="yes" />
      <Button kind="danger" testid="confirm">
        {p.confirmLabel}
      </Button>
      <ButtonLink href={p.cancelHref} kind="secondary">
        {p.cancelLabel ?? 'Cancel, keep everything as it is'}
      </ButtonLink>
    </>
  );
  return (
    <section class="confirm" aria-labelledby="confirm-title">
      <h1 id="confirm-title">{p.title}</h1>
      {p.children}
      {p.fields ? (
        <form method="post" action={p.action}>
          {p.fields}
          <div class="actions">{buttons}</div>
        </form>
      ) : (
        <form method="post" action={p.action} class="actions">
          {buttons}
        </form>
      )}
    </section>
  );
}
