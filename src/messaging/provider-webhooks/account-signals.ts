/**
 * The provider's account signals, applied (the account-signal half of partner/'s
 * `ProviderWebhookSink`): a business number's quality rating or messaging limit tier changed, or a
 * template's quality score. Portico keeps no copy of numbers and templates: they are read from
 * the provider (cached per portal, `MESSAGING_PROVIDER_CACHE_MS`), so a signal drops this
 * instance's cached lists, and the next read of `GET /messaging/numbers` or `/messaging/templates`
 * shows the provider's new rating, tier, score or status. Each signal reaches the tenant as an
 * event (`phone_number.quality_updated`, `template.status_updated`), emitted in a transaction of
 * its own. A template pause is a status update (status-events.ts).
 *
 * The account's standing is kept as well: a template's new category and the day it applies
 * (`template.category_changed`; sends are priced by it from then, account-standing.ts), a
 * person's stop or resume of marketing messages from a number (`contact.marketing_preference_changed`;
 * marketing templates to them are refused, contacts/marketing-preferences.ts), and alerts,
 * restrictions, violations, bans, capability and display-name decisions (`account.alert`,
 * `account.updated`, `account.capability_updated`, `phone_number.name_updated`), shown on
 * /settings while in force.
 *
 * Invariants: no provider call here (the webhook is answered after this runs): the phone number
 * id of a quality signal, which names the number by its display number only, comes from the
 * numbers this instance holds, or from the ones it held before a signal dropped them (a number's
 * id never changes; its rating and tier are not read from there), else it is null.
 *
 * @see https://developers.facebook.com/docs/graph-api/webhooks/reference/whatsapp-business-account/#phone_number_quality_update
 * @see docs/messaging.md "Account signals"
 */
import { LRUCache } from 'lru-cache';
import { recordMarketingPreference } from '../../contacts/marketing-preferences.ts';
import type { Database } from '../../db/client.ts';
import type {
  AccountStandingEvent,
  PhoneNumberQualityEvent,
  ProviderWebhookSink,
  TemplateCategoryEvent,
  TemplateQualityEvent,
  UserPreferenceEvent,
} from '../../partner/cloud-api/provider-webhook-events.ts';
import type { MessagingEvents } from '../events/messaging-events.ts';
import { recordStandingSignal, recordTemplateCategory } from './account-standing.ts';
import { standingSummary } from './standing-words.ts';
import type {
  ProviderAdapter,
  ProviderPhoneNumber as PhoneNumber,
} from '../provider/provider-adapter.ts';

type SignalSink = Required<
  Pick<
    ProviderWebhookSink,
    | 'phoneNumberQualityUpdated'
    | 'templateQualityUpdated'
    | 'templateCategoryChanged'
    | 'userPreferencesChanged'
    | 'accountStanding'
  >
>;

const STANDING_TYPES = {
  account_alerts: 'account.alert',
  account_update: 'account.updated',
  business_capability_update: 'account.capability_updated',
  phone_number_name_update: 'phone_number.name_updated',
} as const;

/** How many portals' dropped numbers are kept (a few hundred bytes each). */
const DROPPED_PORTALS_MAX = 10_000;

/** Digits only: how display numbers are compared (`+1 555-010-1234` is `15550101234`). */
const digits = (n: string) => n.replace(/[^0-9]/g, '');

export function createAccountSignalSink(deps: {
  db: Database;
  provider: Pick<ProviderAdapter, 'cachedNumbers' | 'invalidate'>;
  /** Where the signals are announced (none in tests of messaging alone). */
  events?: MessagingEvents | undefined;
}): SignalSink {
  const { db, provider } = deps;
  const bus = deps.events;
  // The numbers each portal had when a signal last dropped its cached lists, for their ids.
  const dropped = new LRUCache<number, PhoneNumber[]>({ max: DROPPED_PORTALS_MAX });
  const invalidate = (portalId: number) => {
    const numbers = provider.cachedNumbers(portalId);
    if (numbers) dropped.set(portalId, numbers);
    provider.invalidate(portalId);
  };
  const numberOf = (portalId: number, event: { wabaId: string; displayPhoneNumber: string }) => {
    const named = (n: PhoneNumber) =>
      n.wabaId === event.wabaId &&
      digits(n.displayPhoneNumber) === digits(event.displayPhoneNumber);
    return provider.cachedNumbers(portalId)?.find(named) ?? dropped.get(portalId)?.find(named);
  };
  return {
    async phoneNumberQualityUpdated(portalId: number, event: PhoneNumberQualityEvent) {
      const number = numberOf(portalId, event);
      invalidate(portalId);
      if (!bus) return;
      await db.transaction((tx) =>
        bus.emitSerial('phone_number.quality_updated', {
          tx,
          portalId,
          phoneNumberId: number?.id ?? null,
          displayPhoneNumber: `+${digits(event.displayPhoneNumber)}`,
          wabaId: event.wabaId,
          event: event.event,
          messagingLimitTier: event.messagingLimitTier ?? null,
          ...(event.previousMessagingLimitTier !== undefined && {
            previousMessagingLimitTier: event.previousMessagingLimitTier,
          }),
        }),
      );
    },

    async templateQualityUpdated(portalId: number, event: TemplateQualityEvent) {
      invalidate(portalId);
      if (!bus) return;
      await db.transaction((tx) =>
        bus.emitSerial('template.quality_updated', {
          tx,
          portalId,
          templateId: event.templateId,
          name: event.name,
          language: event.language,
          wabaId: event.wabaId,
          qualityScore: { from: event.previousQualityScore, to: event.qualityScore },
        }),
      );
    },

    async templateCategoryChanged(portalId: number, event: TemplateCategoryEvent) {
      invalidate(portalId);
      await db.transaction(async (tx) => {
        await recordTemplateCategory(tx, portalId, event);
        await bus?.emitSerial('template.category_changed', {
          tx,
          portalId,
          templateId: event.templateId,
          name: event.name,
          language: event.language,
          wabaId: event.wabaId,
          previousCategory: event.previousCategory,
          category: event.category,
          effectiveAt: event.effectiveAt.toISOString(),
          impending: event.impending,
        });
      });
    },

    async userPreferencesChanged(portalId: number, events: UserPreferenceEvent[]) {
      for (const e of events)
        await db.transaction(async (tx) => {
          const stopped = e.preference === 'stop';
          const { contactId, changed } = await recordMarketingPreference(tx, {
            portalId,
            phone: `+${e.waId}`,
            phoneNumberId: e.phoneNumberId,
            stopped,
            at: e.timestamp,
          });
          if (changed)
            await bus?.emitSerial('contact.marketing_preference_changed', {
              tx,
              portalId,
              contactId,
              phoneNumberId: e.phoneNumberId,
              preference: stopped ? 'stopped' : 'resumed',
              changedAt: e.timestamp.toISOString(),
            });
        });
    },

    async accountStanding(portalId: number, event: AccountStandingEvent) {
      const shown =
        event.displayPhoneNumber === undefined ? null : `+${digits(event.displayPhoneNumber)}`;
      const number =
        event.displayPhoneNumber === undefined
          ? undefined
          : numberOf(portalId, {
              wabaId: event.wabaId,
              displayPhoneNumber: event.displayPhoneNumber,
            });
      invalidate(portalId);
      const summary = standingSummary(event, shown);
      const expiresAt = event.expiresAt ?? null;
      await db.transaction(async (tx) => {
        await recordStandingSignal(tx, portalId, {
          wabaId: event.wabaId,
          field: event.field,
          event: event.event,
          severity: event.severity,
          summary,
          details: event.details,
          expiresAt,
        });
        const type = STANDING_TYPES[event.field];
        const data =
          type === 'phone_number.name_updated'
            ? {
                phoneNumberId: number?.id ?? null,
                displayPhoneNumber: shown!,
                wabaId: event.wabaId,
                ...event.details,
              }
            : {
                wabaId: event.wabaId,
                event: event.event,
                severity: event.severity,
                summary,
                ...event.details,
                ...(expiresAt && { expiresAt: expiresAt.toISOString() }),
              };
        await bus?.emitSerial('account.standing', {
          tx,
          portalId,
          standing: { type, data },
        });
      });
    },
  };
}
