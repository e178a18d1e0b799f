/**
 * The webhook events of a team working its conversations: status, assignee, labels and private
 * notes (a part of the catalogue in webhook-events.ts, which spreads them into `EVENT_SCHEMAS`).
 * A note's body travels only in its own event, to the portal's own signed endpoints.
 *
 * @see docs/reference/webhook-events.md
 * @see docs/decisions/0064-conversations-worked-by-a-team.md
 */
import { Type } from 'typebox';
import { Iso, Nullable } from './account-event-schemas.ts';

const STATUSES = ['open', 'pending', 'resolved', 'snoozed'] as const;

/** The conversation an event is about. */
const ABOUT = {
  conversationId: Type.String({ description: 'The conversation (`cnv_…`).' }),
  contactId: Type.String({ description: 'The contact (`ctc_…`).' }),
  phoneNumberId: Type.String({ description: 'The business phone number.' }),
};

/** Who made the change. */
const By = Type.Union(
  [
    Type.Object({
      type: Type.Literal('user'),
      id: Type.String({ description: 'The member (`usr_…`).' }),
    }),
    Type.Object({ type: Type.Literal('system') }),
  ],
  {
    description:
      'A member of the portal (`{type: "user", id}`), or Portico (`{type: "system"}`: a new ' +
      'message reopened the conversation, a snooze ended).',
  },
);

const member = (description: string) => Nullable(Type.String(), description);

export const CONVERSATION_EVENT_SCHEMAS = {
  'conversation.status_changed': Type.Object(
    {
      ...ABOUT,
      from: Type.Enum(STATUSES, { description: 'The status before.' }),
      to: Type.Enum(STATUSES, { description: 'The status now.' }),
      snoozedUntil: Nullable(Iso('When the snooze ends.'), 'When the snooze ends (`snoozed`).'),
      by: By,
      changedAt: Iso('When.'),
    },
    {
      description:
        "A conversation's status changed (or its snooze's end): by a member, or by Portico when " +
        'a new message reopened a resolved or snoozed conversation or a snooze ended.',
      examples: [
        {
          conversationId: 'cnv_4hT2k',
          contactId: 'ctc_8fJ2a',
          phoneNumberId: '1020345678011',
          from: 'open',
          to: 'resolved',
          snoozedUntil: null,
          by: { type: 'user', id: 'usr_7' },
          changedAt: '2026-11-23T18:40:00.000Z',
        },
      ],
    },
  ),
  'conversation.assigned': Type.Object(
    {
      ...ABOUT,
      from: member('The member before (`usr_…`); null: nobody.'),
      to: member('The member now (`usr_…`); null: nobody.'),
      by: By,
      changedAt: Iso('When.'),
    },
    {
      description: 'A conversation was assigned to a member, reassigned or unassigned.',
      examples: [
        {
          conversationId: 'cnv_4hT2k',
          contactId: 'ctc_8fJ2a',
          phoneNumberId: '1020345678011',
          from: null,
          to: 'usr_7',
          by: { type: 'user', id: 'usr_2' },
          changedAt: '2026-11-23T18:35:00.000Z',
        },
      ],
    },
  ),
  'conversation.labelled': Type.Object(
    {
      ...ABOUT,
      labels: Type.Array(Type.String(), { description: 'The labels now, sorted.' }),
      added: Type.Array(Type.String(), { description: 'Labels added.' }),
      removed: Type.Array(Type.String(), { description: 'Labels removed.' }),
      by: By,
      changedAt: Iso('When.'),
    },
    {
      description: "A conversation's labels changed.",
      examples: [
        {
          conversationId: 'cnv_4hT2k',
          contactId: 'ctc_8fJ2a',
          phoneNumberId: '1020345678011',
          labels: ['billing', 'vip'],
          added: ['vip'],
          removed: [],
          by: { type: 'user', id: 'usr_7' },
          changedAt: '2026-11-23T18:36:00.000Z',
        },
      ],
    },
  ),
  'conversation.note_added': Type.Object(
    {
      conversationId: ABOUT.conversationId,
      contactId: ABOUT.contactId,
      noteId: Type.String({ description: 'The note (`nte_…`).' }),
      authorId: Type.String({ description: 'The member who wrote it (`usr_…`).' }),
      body: Type.String({ description: 'The note, as written (members only; never sent).' }),
      createdAt: Iso('When.'),
    },
    {
      description:
        'A member added a private note to a conversation. The only event that carries a note; ' +
        'the person never sees it.',
      examples: [
        {
          conversationId: 'cnv_4hT2k',
          contactId: 'ctc_8fJ2a',
          noteId: 'nte_9QwE2',
          authorId: 'usr_7',
          body: 'Refund approved by finance; tell them on Monday.',
          createdAt: '2026-11-23T18:37:00.000Z',
        },
      ],
    },
  ),
};
