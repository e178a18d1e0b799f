/**
 * The `campaign.*` events of the catalogue (webhook-events.ts): a campaign moved along its
 * lifecycle. Each carries the campaign's id, its status after the move and, for a pause the
 * system made, the reason; the counts are read with `GET /messaging/campaigns/{id}`.
 *
 * @see docs/how-to/send-a-campaign.md
 */
import { Type } from 'typebox';
import { Iso } from './account-event-schemas.ts';

const campaignEvent = (description: string, status: string, reason: string | null = null) =>
  Type.Object(
    {
      campaignId: Type.String({ description: 'The campaign (`cmp_…`).' }),
      status: Type.String({ description: 'Its status after the change.' }),
      reason: Type.Union([Type.String(), Type.Null()], {
        description:
          'Why the system paused it (`insufficient_credit`, `messaging_limit_reached`, ' +
          '`number_not_ready`, `template_not_approved`, `not_connected`); null otherwise.',
      }),
      occurredAt: Iso('When.'),
    },
    {
      description,
      examples: [
        { campaignId: 'cmp_5RtY8', status, reason, occurredAt: '2026-11-23T18:40:00.000Z' },
      ],
    },
  );

export const CAMPAIGN_EVENT_SCHEMAS = {
  'campaign.scheduled': campaignEvent(
    'A campaign was started with a schedule to come: it will run then.',
    'scheduled',
  ),
  'campaign.started': campaignEvent(
    'A campaign began sending (started at once, or its schedule came).',
    'running',
  ),
  'campaign.paused': campaignEvent(
    'A campaign was paused: on request, or by the system with a reason.',
    'paused',
    'insufficient_credit',
  ),
  'campaign.resumed': campaignEvent('A paused campaign runs again.', 'running'),
  'campaign.completed': campaignEvent(
    'Every recipient of a campaign was handed to the provider or refused.',
    'completed',
  ),
  'campaign.cancelled': campaignEvent(
    'A campaign was cancelled: nothing more of it is sent.',
    'cancelled',
  ),
};
