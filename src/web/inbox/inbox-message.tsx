/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * What one message of the inbox's thread shows inside its bubble, both directions, as the
 * person's phone shows it: a text; a photo or sticker inline (served by our media id through
 * `/inbox/media/{id}`); a video, audio or document as a download link with its file name; a
 * location; an interactive message's body with its reply buttons (disabled) or its list (the
 * button label and rows) or its link; a template's name and parameters; the person's chosen
 * button or row; a voice message as one; above a person's message, that it was forwarded (many
 * times) and the click-to-WhatsApp ad it came from. A medium sent by an https link is shown as
 * that link (the page loads nothing from another origin).
 *
 * @see docs/messaging.md "Inbox"
 */
import { BubbleButtons, BubbleList } from '../../browser/kit-conversation.tsx';
import {
  isInbound,
  outboundMedium,
  summaryOf,
  type InboxInbound,
  type InboxMessage,
  type InboxOutbound,
  type OutboundInteractive,
  type OutboundMedium,
} from './inbox-view.ts';

/** Where the page serves a medium of the portal by our id (`med_…`). */
export function mediaHref(id: string): string {
  return `/inbox/media/${encodeURIComponent(id)}`;
}

const KIND_WORDS: Record<string, string> = {
  image: 'photo',
  video: 'video',
  audio: 'audio',
  document: 'document',
  sticker: 'sticker',
};

function Location(p: {
  latitude: number;
  longitude: number;
  name?: string | undefined;
  address?: string | undefined;
}) {
  return (
    <p data-testid="location">
      📍 {[p.name, p.address].filter(Boolean).join(', ') || 'Location'}{' '}
      <span class="muted">
        ({p.latitude.toFixed(5)}, {p.longitude.toFixed(5)})
      </span>
    </p>
  );
}

/** An outbound medium: inline when it is a photo or sticker we hold, else a link. */
function OutboundMediumBody({ type, medium }: { type: string; medium: OutboundMedium }) {
  const words = KIND_WORDS[type] ?? 'file';
  let shown;
  if (medium.mediaId && (type === 'image' || type === 'sticker'))
    shown = (
      <img
        src={mediaHref(medium.mediaId)}
        alt={medium.caption || (type === 'sticker' ? 'Sticker' : 'Photo')}
        loading="lazy"
        data-testid="outbound-image"
      />
    );
  else if (medium.mediaId)
    shown = (
      <p>
        <a href={mediaHref(medium.mediaId)} download data-testid="outbound-file">
          {medium.filename || `Download the ${words}`}
        </a>{' '}
        <span class="muted">({words})</span>
      </p>
    );
  else if (medium.link)
    shown = (
      <p>
        <a href={medium.link} rel="noopener noreferrer" data-testid="outbound-link">
          {medium.filename || `The ${words} at ${hostOf(medium.link)}`}
        </a>{' '}
        <span class="muted">({words}, by link)</span>
      </p>
    );
  else shown = <p class="muted">A {words}</p>;
  return (
    <>
      {medium.voice && <p data-testid="voice">🎤 Voice message</p>}
      {shown}
      {medium.caption && <p>{medium.caption}</p>}
    </>
  );
}

function hostOf(link: string): string {
  try {
    return new URL(link).host;
  } catch {
    return 'a link';
  }
}

function InteractiveBody({ i }: { i: OutboundInteractive }) {
  const a = i.action;
  return (
    <div data-testid={`interactive-${i.type}`}>
      {i.header?.text && (
        <p>
          <strong>{i.header.text}</strong>
        </p>
      )}
      {i.body && <p>{i.body.text}</p>}
      {i.footer && <p class="muted">{i.footer.text}</p>}
      {a?.buttons && <BubbleButtons titles={a.buttons.map((b) => b.reply.title)} />}
      {a?.sections && <BubbleList button={a.button ?? 'Choose'} sections={a.sections} />}
      {a?.parameters && (
        <p>
          <a href={a.parameters.url} rel="noopener noreferrer">
            {a.parameters.displayText}
          </a>
        </p>
      )}
    </div>
  );
}

function OutboundBody({ m }: { m: InboxOutbound }) {
  const medium = outboundMedium(m);
  let body;
  if (m.text) body = <p>{m.text.body}</p>;
  else if (m.template)
    body = (
      <>
        <p class="muted">Template {m.template.name}</p>
        {m.template.parameters && m.template.parameters.length > 0 && (
          <p>{m.template.parameters.join(' · ')}</p>
        )}
      </>
    );
  else if (medium) body = <OutboundMediumBody type={m.type} medium={medium} />;
  else if (m.location) body = <Location {...m.location} />;
  else if (m.interactive) body = <InteractiveBody i={m.interactive} />;
  else body = <p class="muted">The content is no longer kept.</p>;
  return (
    <>
      {body}
      {m.status === 'failed' && m.error && <p class="error">Not delivered: {m.error.title}</p>}
    </>
  );
}

/**
 * What WhatsApp shows above a person's message: "Forwarded" (or "Forwarded many times", past
 * five forwards), and the click-to-WhatsApp ad they tapped (its headline, linked to the ad).
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/text
 */
function InboundOrigin({ m }: { m: InboxInbound }) {
  const forwarded = m.context?.frequentlyForwarded
    ? 'Forwarded many times'
    : m.context?.forwarded
      ? 'Forwarded'
      : null;
  const ad = m.referral;
  const adWords = ad?.headline || ad?.body || (ad?.sourceType === 'post' ? 'a post' : 'an ad');
  return (
    <>
      {forwarded && (
        <p class="muted" data-testid="forwarded">
          ↪ {forwarded}
        </p>
      )}
      {ad && (
        <p class="muted" data-testid="referral">
          From {ad.sourceType === 'post' ? 'a post' : 'an ad'}:{' '}
          {ad.sourceUrl && /^https?:\/\//.test(ad.sourceUrl) ? (
            <a href={ad.sourceUrl} rel="noopener noreferrer">
              {adWords}
            </a>
          ) : (
            adWords
          )}
        </p>
      )}
    </>
  );
}

function InboundBody({ m }: { m: InboxInbound }) {
  return (
    <>
      <InboundOrigin m={m} />
      <InboundContent m={m} />
    </>
  );
}

function InboundContent({ m }: { m: InboxInbound }) {
  if (m.contentErased) return <p class="muted">The content is no longer kept.</p>;
  if (m.media) {
    const { media } = m;
    return m.type === 'image' || m.type === 'sticker' ? (
      <>
        <img
          src={mediaHref(media.id)}
          alt={media.caption || (m.type === 'sticker' ? 'Sticker' : 'Photo')}
          loading="lazy"
          data-testid="inbound-image"
        />
        {media.caption && <p>{media.caption}</p>}
      </>
    ) : (
      <>
        {media.voice && <p data-testid="voice">🎤 Voice message</p>}
        <p>
          <a href={mediaHref(media.id)} download data-testid="media-download">
            Download {media.filename || summaryOf(m).toLowerCase()}
          </a>{' '}
          <span class="muted">({media.mimeType})</span>
        </p>
        {media.caption && <p>{media.caption}</p>}
      </>
    );
  }
  if (m.location) return <Location {...m.location} />;
  const chosen = m.interactive?.buttonReply ?? m.interactive?.listReply;
  if (chosen)
    return (
      <p data-testid="chosen">
        <span class="muted">Chose </span>
        <strong>{chosen.title}</strong>
      </p>
    );
  return <p>{summaryOf(m)}</p>;
}

/** A message's content inside its bubble. */
export function MessageContent({ m }: { m: InboxMessage }) {
  return isInbound(m) ? <InboundBody m={m} /> : <OutboundBody m={m} />;
}
