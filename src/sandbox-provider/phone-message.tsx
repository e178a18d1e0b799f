/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * One message on the sandbox phone, as WhatsApp shows it to the person: text; images and
 * stickers as thumbnails of the sandbox's media bytes (`/sandbox/phone/media/{id}`; a medium
 * sent by link is a link, never fetched); documents as links with their file name; audio and
 * video as links; a location's name, address and coordinates; shared contacts; an interactive
 * message's header, body and footer with its reply buttons as buttons, its list as a menu of
 * rows, its call-to-action as a link; a template with its header, body, footer and buttons, its
 * parameters filled in; the quoted message above a reply. Tapping a button or a row posts
 * `/sandbox/phone/interactive` (phone-forms.ts), which sends the interactive reply webhook.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/messages/interactive-reply-buttons-messages
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/messages/interactive-list-messages
 */
import type { PhoneMessage } from './cloud-state.ts';

type Json = Record<string, unknown>;

/** Where the phone page loads a medium's bytes from (sandbox-phone.tsx). */
export const phoneMediaUrl = (id: string) => `/sandbox/phone/media/${encodeURIComponent(id)}`;

export const MESSAGE_STYLE = `
.thumb{display:block;max-width:12rem;max-height:12rem;height:auto;border-radius:6px;margin:var(--s-2) 0}
.quote{border-left:3px solid var(--c-accent);background:#f1f4f8;margin:var(--s-2) 0;padding:.25rem var(--s-2);color:var(--c-muted);font-size:.9rem}
.bubble p{margin:.25rem 0}.bubble .header{font-weight:600}
.choices{display:flex;flex-wrap:wrap;gap:var(--s-2)}.choices button{margin:0}
.menu fieldset button{display:block;width:100%;text-align:left;margin:var(--s-2) 0 0}
`;

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

/** A one-line summary of a message (what a quote shows). */
export function summaryOf(m: PhoneMessage): string {
  if (m.text !== undefined) return m.text;
  if (m.template) return m.templateView?.body ?? `template ${m.template.name}`;
  const c = m.content ?? {};
  const body = c.body as Json | undefined;
  return str(c.caption) ?? str(c.filename) ?? str(body?.text) ?? str(c.name) ?? `(${m.type})`;
}

/** A medium: a thumbnail (image, sticker), or a link (document, audio, video; any by link). */
export function Medium(p: { kind: string; media: Json }) {
  const { kind, media } = p;
  const id = str(media.id);
  const link = str(media.link);
  const caption = str(media.caption);
  const filename = str(media.filename);
  const label = filename ?? caption ?? kind;
  return (
    <>
      {kind === 'audio' && media.voice === true && <p class="voice">🎤 Voice message</p>}
      {id !== undefined && (kind === 'image' || kind === 'sticker') ? (
        <img class="thumb" src={phoneMediaUrl(id)} alt={caption ?? `${kind} from the business`} />
      ) : id !== undefined ? (
        <a href={phoneMediaUrl(id)} download={filename ?? ''}>
          {kind === 'document' ? `📄 ${label}` : `${kind}: ${label}`}
        </a>
      ) : (
        <a href={link ?? ''} rel="noopener noreferrer">
          {`${kind}${filename ? ` ${filename}` : ''} at ${link ?? ''}`}
        </a>
      )}
      {caption !== undefined && <p>{caption}</p>}
    </>
  );
}

/** The hidden fields of a tap: who taps which message. */
function TapFields(p: { m: PhoneMessage }) {
  return (
    <>
      <input type="hidden" name="from" value={p.m.waId} />
      <input type="hidden" name="phone_number_id" value={p.m.phoneNumberId} />
      <input type="hidden" name="message_id" value={p.m.wamid} />
    </>
  );
}

/** Reply buttons: one form, a submit button per reply. */
function Buttons(p: { m: PhoneMessage; choices: { id: string; title: string }[] }) {
  return (
    <form method="post" action="/sandbox/phone/interactive" class="choices">
      <TapFields m={p.m} />
      {p.choices.map((c) => (
        <button type="submit" name="reply_id" value={c.id} key={c.id}>
          {c.title}
        </button>
      ))}
    </form>
  );
}

/** A list message's menu: its button label opens the sections and their rows. */
function ListMenu(p: { m: PhoneMessage; action: Json }) {
  const sections = (p.action.sections ?? []) as Json[];
  return (
    <details class="menu">
      <summary>{str(p.action.button)}</summary>
      <form method="post" action="/sandbox/phone/interactive">
        <TapFields m={p.m} />
        {sections.map((s, i) => (
          <fieldset key={i}>
            {str(s.title) !== undefined && <legend>{str(s.title)}</legend>}
            {((s.rows ?? []) as Json[]).map((r) => (
              <button type="submit" name="reply_id" value={str(r.id)} key={str(r.id)}>
                {str(r.title)}
                {str(r.description) !== undefined && (
                  <>
                    <br />
                    <span class="meta">{str(r.description)}</span>
                  </>
                )}
              </button>
            ))}
          </fieldset>
        ))}
      </form>
    </details>
  );
}

/** An interactive message: header, body, footer and its action. */
function Interactive(p: { m: PhoneMessage; i: Json }) {
  const { m, i } = p;
  const header = i.header as Json | undefined;
  const headerKind = str(header?.type);
  const action = (i.action ?? {}) as Json;
  const params = (action.parameters ?? {}) as Json;
  return (
    <div class="bubble">
      {headerKind === 'text' && <p class="header">{str(header?.text)}</p>}
      {header && headerKind && headerKind !== 'text' && (
        <Medium kind={headerKind} media={(header[headerKind] ?? {}) as Json} />
      )}
      <p>{str((i.body as Json | undefined)?.text)}</p>
      {i.footer !== undefined && <p class="meta">{str((i.footer as Json).text)}</p>}
      {i.type === 'button' && (
        <Buttons
          m={m}
          choices={((action.buttons ?? []) as Json[]).map((b) => {
            const reply = b.reply as Json;
            return { id: String(reply.id), title: String(reply.title) };
          })}
        />
      )}
      {i.type === 'list' && <ListMenu m={m} action={action} />}
      {i.type === 'cta_url' && (
        <a href={str(params.url) ?? ''} rel="noopener noreferrer">
          {str(params.display_text)}
        </a>
      )}
      {(i.type === 'product' || i.type === 'product_list') && (
        <p class="meta">
          {i.type === 'product' ? `Product ${String(action.product_retailer_id)}` : 'Products'} from
          catalog {String(action.catalog_id)}
        </p>
      )}
    </div>
  );
}

/** A template as sent: header, body, footer, buttons (quick replies can be tapped). */
function Template(p: { m: PhoneMessage; t: NonNullable<PhoneMessage['template']> }) {
  const { m } = p;
  const t = { ...p.t, ...m.templateView };
  const quick = (t.buttons ?? [])
    .map((b, i) => ({ ...b, id: `quick_reply:${i}` }))
    .filter((b) => b.type === 'QUICK_REPLY');
  return (
    <div class="bubble">
      <p class="meta">
        template {t.name} ({t.language}) {JSON.stringify(t.params)}
      </p>
      {t.header?.text !== undefined && <p class="header">{t.header.text}</p>}
      {t.header?.media && <Medium kind={t.header.media.type} media={t.header.media} />}
      {t.body !== undefined && <p>{t.body}</p>}
      {t.footer !== undefined && <p class="meta">{t.footer}</p>}
      {(t.buttons ?? [])
        .filter((b) => b.type !== 'QUICK_REPLY')
        .map((b, i) =>
          b.url !== undefined ? (
            <p key={i}>
              <a href={b.url} rel="noopener noreferrer">
                {b.text}
              </a>
            </p>
          ) : (
            <p key={i} class="meta">
              [{b.text}]
            </p>
          ),
        )}
      {quick.length > 0 && (
        <Buttons m={m} choices={quick.map((b) => ({ id: b.id, title: b.text }))} />
      )}
    </div>
  );
}

/** A location or shared contacts. */
function Place(p: { c: Json }) {
  const { c } = p;
  return (
    <p>
      📍 {[str(c.name), str(c.address)].filter(Boolean).join(', ')} ({String(c.latitude)},{' '}
      {String(c.longitude)})
    </p>
  );
}

/** What a business sent, by kind. */
export function BusinessMessage(p: { m: PhoneMessage }) {
  const { m } = p;
  if (m.template) return <Template m={m} t={m.template} />;
  const c = m.content;
  if (!c) return <>{m.text ?? `(${m.type})`}</>;
  switch (m.type) {
    case 'interactive':
      return <Interactive m={m} i={c} />;
    case 'location':
      return <Place c={c} />;
    case 'contacts':
      return (
        <p>
          👤{' '}
          {((c.contacts ?? []) as Json[])
            .map((x) => str((x.name as Json | undefined)?.formatted_name))
            .join(', ')}
        </p>
      );
    default:
      return <Medium kind={m.type} media={c} />;
  }
}

/** The quoted message above a reply (its summary), or a note when it is no longer kept. */
export function Quote(p: { quoted: PhoneMessage | undefined }) {
  return (
    <blockquote class="quote">
      {p.quoted ? summaryOf(p.quoted) : 'replying to a message'}
    </blockquote>
  );
}
