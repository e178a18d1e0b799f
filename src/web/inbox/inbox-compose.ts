/**
 * The inbox composer's rich kinds, while the conversation's window is open: reply buttons
 * (1–3 titles), a list (a button label and rows), a file (sent as a photo, video, audio,
 * document or sticker by the kind its upload detected, with a caption), a reaction to a message
 * of the thread, and a quote (`context: {messageId}`) on any of them. The form's fields checked
 * in the page's words against the Cloud API's limits, then the API's send body (the kind's
 * object in camelCase, as `POST /messaging/messages` takes it). Pure: no I/O.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/messages/interactive-reply-buttons-messages
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/messages/interactive-list-messages
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/messages/reaction-messages
 * @see docs/messaging.md "Inbox"
 */
import { CAPTION_MAX, INTERACTIVE } from '../../messaging/store/send-kinds-schemas.ts';
import type { ComposerErrors, ComposerForm } from '../message-composer.ts';

/** What the open window's composer sends: free text, a file, reply buttons or a list. */
export const REPLY_MODES = ['text', 'file', 'buttons', 'list'] as const;
export type ReplyMode = (typeof REPLY_MODES)[number];

export const isReplyMode = (v: string | undefined): v is ReplyMode =>
  (REPLY_MODES as readonly string[]).includes(v ?? '');

/** The Cloud API's limits the page checks, in characters (counts for buttons and rows). */
export const LIMITS = {
  interactiveBody: INTERACTIVE.bodyText,
  buttonTitle: INTERACTIVE.buttonTitle,
  buttons: INTERACTIVE.buttons,
  listButton: INTERACTIVE.listButton,
  rowTitle: INTERACTIVE.rowTitle,
  /** Rows the page offers (the Cloud API takes up to 10 across sections). */
  rows: 5,
  caption: CAPTION_MAX,
} as const;

/** The reactions the page offers, with their names for screen readers. */
export const REACTION_CHOICES = [
  { emoji: '👍', name: 'thumbs up' },
  { emoji: '❤️', name: 'heart' },
  { emoji: '😂', name: 'laughing' },
  { emoji: '😮', name: 'surprised' },
  { emoji: '😢', name: 'sad' },
  { emoji: '🙏', name: 'thank you' },
] as const;

/** A message id of ours (`msg_…`): what a quote or a reaction may name. */
export const MESSAGE_ID = /^msg_[0-9A-Za-z]{1,60}$/;

/** The send body's media kinds, and which of them take a caption. */
export type MediaKind = 'image' | 'video' | 'audio' | 'document' | 'sticker';
const CAPTIONED: ReadonlySet<MediaKind> = new Set(['image', 'video', 'document']);

/** An uploaded medium as the composer sends it. */
export interface UploadedMedium {
  /** Our media id, `med_…`. */
  id: string;
  mimeType: string;
  /** The kind the upload detected, when it says; else read from `mimeType`. */
  kind?: MediaKind | undefined;
}

/**
 * The kind a medium is sent as, by its detected type (the Cloud API's supported types: JPEG
 * and PNG photos, WebP stickers, MP4 and 3GPP videos, audio, and anything else a document).
 */
export function mediaKindOf(m: UploadedMedium): MediaKind {
  if (m.kind) return m.kind;
  const type = m.mimeType.toLowerCase();
  if (type === 'image/jpeg' || type === 'image/png') return 'image';
  if (type === 'image/webp') return 'sticker';
  if (type === 'video/mp4' || type === 'video/3gpp') return 'video';
  if (type.startsWith('audio/')) return 'audio';
  return 'document';
}

const blank = (v: string | undefined) => v === undefined || !/\S/.test(v);
const filled = (values: readonly string[] | undefined) =>
  (values ?? []).map((v) => v.trim()).filter((v) => v.length > 0);

/** What a buttons or list form lacks, in the page's words (nothing is sent when any). */
export function richFormErrors(mode: 'buttons' | 'list', form: ComposerForm): ComposerErrors {
  const errors: ComposerErrors = {};
  if (blank(form.text)) errors.text = 'Write the message the buttons go with.';
  else if (form.text!.length > LIMITS.interactiveBody)
    errors.text = `At most ${LIMITS.interactiveBody} characters with buttons or a list.`;
  if (mode === 'buttons') {
    const titles = form.buttons ?? [];
    titles.forEach((t, i) => {
      if (t.trim().length > LIMITS.buttonTitle)
        errors[`button-${i + 1}`] = `At most ${LIMITS.buttonTitle} characters.`;
    });
    const given = filled(titles);
    if (given.length === 0) errors['button-1'] = 'Give at least one button a title.';
    else if (given.length > LIMITS.buttons)
      errors['button-1'] = `At most ${LIMITS.buttons} buttons.`;
    else if (new Set(given).size !== given.length)
      errors['button-1'] = 'Give each button a different title.';
    return errors;
  }
  if (blank(form.listButton))
    errors.listButton = 'Write the label of the button that opens the list.';
  else if (form.listButton!.trim().length > LIMITS.listButton)
    errors.listButton = `At most ${LIMITS.listButton} characters.`;
  const rows = form.rows ?? [];
  rows.forEach((t, i) => {
    if (t.trim().length > LIMITS.rowTitle)
      errors[`row-${i + 1}`] = `At most ${LIMITS.rowTitle} characters.`;
  });
  const given = filled(rows);
  if (given.length === 0) errors['row-1'] = 'Give the list at least one row.';
  else if (given.length > LIMITS.rows) errors['row-1'] = `At most ${LIMITS.rows} rows.`;
  else if (new Set(given).size !== given.length)
    errors['row-1'] = 'Give each row a different title.';
  return errors;
}

/** The interactive object of a checked buttons or list form. */
export function interactiveOf(mode: 'buttons' | 'list', form: ComposerForm) {
  const body = { text: form.text! };
  if (mode === 'buttons')
    return {
      type: 'button' as const,
      body,
      action: {
        buttons: filled(form.buttons).map((title, i) => ({
          type: 'reply' as const,
          reply: { id: `button-${i + 1}`, title },
        })),
      },
    };
  return {
    type: 'list' as const,
    body,
    action: {
      button: form.listButton!.trim(),
      sections: [{ rows: filled(form.rows).map((title, i) => ({ id: `row-${i + 1}`, title })) }],
    },
  };
}

/** A caption's problem for a medium of `kind`, or null. */
export function captionError(kind: MediaKind, caption: string | undefined): string | null {
  if (blank(caption)) return null;
  if (!CAPTIONED.has(kind)) return `A ${kind} goes without a caption; remove it to send the file.`;
  if (caption!.length > LIMITS.caption) return `At most ${LIMITS.caption} characters.`;
  return null;
}

/** The media object of an uploaded file (by our id), its caption and, for a document, its name. */
export function mediaObjectOf(
  kind: MediaKind,
  medium: UploadedMedium,
  caption: string | undefined,
  fileName: string | undefined,
) {
  return {
    mediaId: medium.id,
    ...(!blank(caption) && CAPTIONED.has(kind) && { caption: caption!.trim() }),
    ...(kind === 'document' && fileName && { filename: fileName }),
  };
}

/** A reaction form's emoji: one of {@link REACTION_CHOICES}, or "" to remove; else null. */
export function reactionEmoji(value: string | undefined): string | null {
  if (value === undefined || value === '') return '';
  return REACTION_CHOICES.some((c) => c.emoji === value) ? value : null;
}
