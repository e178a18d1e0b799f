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
 * Invariants: no provider call here (the webhook is answered after this runs): the phone number
 * id of a quality signal, which names the number by its display number only, comes from the
 * numbers this instance holds, or from the ones it held before a signal dropped them (a number's
 * id never changes; its rating and tier are not read from there), else it is null.
 *
 * @see https://developers.facebook.com/docs/graph-api/webhooks/reference/whatsapp-business-account/#phone_number_quality_update
 * @see docs/messaging.md "Account signals"
 */
import { LRUCache } from 'lru-cache';
import type { Database } from '../../db/client.ts';
import type {
  PhoneNumberQualityEvent,
  ProviderWebhookSink,
  TemplateQualityEvent,
} from '../../partner/partner-service.ts';
import type { Tx } from '../messages/messages-repository.ts';
import type {
  ProviderAdapter,
  ProviderPhoneNumber as PhoneNumber,
} from '../provider/provider-adapter.ts';

/** Steps another feature (webhooks) adds to the signals, each in the signal's transaction. */
export interface AccountSignalSteps {
  phoneNumberQualityUpdated(
    tx: Tx,
    portalId: number,
    e: {
      phoneNumberId: string | null;
      displayPhoneNumber: string;
      wabaId: string;
      event: string;
      messagingLimitTier: string | null;
      previousMessagingLimitTier?: string;
    },
  ): Promise<void>;
  templateQualityUpdated(
    tx: Tx,
    portalId: number,
    e: {
      templateId: string;
      name: string;
      language: string;
      wabaId: string;
      qualityScore: { from: string; to: string };
    },
  ): Promise<void>;
}

type SignalSink = Required<
  Pick<ProviderWebhookSink, 'phoneNumberQualityUpdated' | 'templateQualityUpdated'>
>;

/** How many portals' dropped numbers are kept (a few hundred bytes each). */
const DROPPED_PORTALS_MAX = 10_000;

/** Digits only: how display numbers are compared (`+1 555-010-1234` is `15550101234`). */
const digits = (n: string) => n.replace(/[^0-9]/g, '');

export function createAccountSignalSink(deps: {
  db: Database;
  provider: Pick<ProviderAdapter, 'cachedNumbers' | 'invalidate'>;
  /** The webhooks' steps (none in tests of messaging alone). */
  steps?: AccountSignalSteps | undefined;
}): SignalSink {
  const { db, provider, steps } = deps;
  // The numbers each portal had when a signal last dropped its cached lists, for their ids.
  const dropped = new LRUCache<number, PhoneNumber[]>({ max: DROPPED_PORTALS_MAX });
  const invalidate = (portalId: number) => {
    const numbers = provider.cachedNumbers(portalId);
    if (numbers) dropped.set(portalId, numbers);
    provider.invalidate(portalId);
  };
  const numberOf = (portalId: number, event: PhoneNumberQualityEvent) => {
    const named = (n: PhoneNumber) =>
      n.wabaId === event.wabaId &&
      digits(n.displayPhoneNumber) === digits(event.displayPhoneNumber);
    return provider.cachedNumbers(portalId)?.find(named) ?? dropped.get(portalId)?.find(named);
  };
  return {
    async phoneNumberQualityUpdated(portalId: number, event: PhoneNumberQualityEvent) {
      const number = numberOf(portalId, event);
      invalidate(portalId);
      if (!steps) return;
      await db.transaction((tx) =>
        steps.phoneNumberQualityUpdated(tx, portalId, {
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
      if (!steps) return;
      await db.transaction((tx) =>
        steps.templateQualityUpdated(tx, portalId, {
          templateId: event.templateId,
          name: event.name,
          language: event.language,
          wabaId: event.wabaId,
          qualityScore: { from: event.previousQualityScore, to: event.qualityScore },
        }),
      );
    },
  };
}
