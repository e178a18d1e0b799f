/**
 * Onboarding a connection's WhatsApp Business Accounts after the grant, as Meta requires of a
 * Tech Provider before the business can send and receive: for each WABA of the connection,
 * subscribe Portico's app to its webhooks (`POST /{waba-id}/subscribed_apps`) and check that the
 * provider lists the app (`GET /{waba-id}/subscribed_apps`); then register each of its numbers
 * not registered yet (`POST /{phone-number-id}/register`) with a six-digit PIN made for that
 * number (node:crypto) and kept sealed (`number_onboarding.pin`).
 *
 * Runs when a connection is made, on a `PARTNER_ADDED` webhook, and on demand (the settings
 * page's Retry, `partner onboard`). One run per connection at a time across every instance: a run
 * first claims the connection row (`onboarding_owner`, `onboarding_until`), and a run that finds
 * it claimed does nothing, so no provider call is made twice.
 *
 * Invariants: the PIN is opened only to be sent in the registration's JSON body; a failure is
 * kept in Portico's words (`last_error`), never the provider's message; a registration refused
 * for too many attempts (133016) is not tried again before `next_attempt_at` (72 hours).
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/embedded-signup/onboarding-customers-as-a-tech-provider
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/business-phone-numbers/registration
 * @see docs/partner-connection.md "Onboarding"
 */
import { randomInt } from 'node:crypto';
import { and, eq, isNull, lt, or, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { connections, numberOnboarding } from '../../db/schema/index.ts';
import { randomBase62 } from '../../platform/crypto.ts';
import type { Keyring } from '../../platform/keyring.ts';
import type { Logger } from '../../platform/logger.ts';
import type { CloudApi } from '../cloud-api/cloud-api.ts';
import { ConnectionInactiveError } from '../connections-store.ts';
import type { WithProvider } from '../outbound-calls.ts';
import { logProviderFailure, ProviderError } from '../provider-error.ts';

/** Where one number stands (`GET /messaging/numbers`' `onboarding`, the settings page). */
export interface OnboardingState {
  wabaId: string;
  /** Portico's app is subscribed to the WABA's webhooks (the provider lists it). */
  webhooksSubscribed: boolean;
  /** The number is registered for the Cloud API. */
  registered: boolean;
  /** Why the last step failed, in Portico's words; null after a success. */
  lastError: string | null;
  /** Not before this is registration tried again; null: any time. */
  nextAttemptAt: Date | null;
}

/** What a call of `onboard` did. */
export type OnboardOutcome =
  | { ran: true }
  /** `claimed`: another run holds the connection; `inactive`: no active connection. */
  | { ran: false; reason: 'claimed' | 'inactive' | 'failed' };

/** How long the provider blocks a number's registration after 133016: 72 hours. */
export const REGISTRATION_BLOCK_MS = 72 * 3600 * 1000;
/** How long a run's claim of a connection lasts at most (a crashed run frees it then). */
const CLAIM_S = 120;
const PURPOSE = 'registration-pin';

type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];

/** A number's failed registration, in Portico's words, and when to try again. */
function registrationFailure(
  err: unknown,
  now: Date,
): { lastError: string; nextAttemptAt: Date | null } {
  const code = err instanceof ProviderError ? err.graphCode : undefined;
  if (code === 133016) {
    const next = new Date(now.getTime() + REGISTRATION_BLOCK_MS);
    return {
      lastError:
        'Registration refused: too many registration attempts for this number (the provider ' +
        `allows 10 in 72 hours). The next attempt is allowed at ${next.toISOString()}.`,
      nextAttemptAt: next,
    };
  }
  if (code === 133005)
    return {
      lastError:
        'Registration refused: the number has another two-step verification PIN. Reset it in ' +
        'WhatsApp Manager, then retry.',
      nextAttemptAt: null,
    };
  return { lastError: `Registration failed: ${failureWords(err)}.`, nextAttemptAt: null };
}

/** A provider failure in Portico's words (never the provider's message). */
function failureWords(err: unknown): string {
  if (!(err instanceof ProviderError)) return 'an internal error';
  if (err.kind === 'permission') return 'the access given does not cover this WhatsApp account';
  if (err.kind === 'unavailable' || err.kind === 'throttled')
    return 'the provider is unavailable; retry later';
  return `the provider refused (error ${err.graphCode ?? err.kind})`;
}

const rethrowDeadToken = (err: unknown) => {
  if (err instanceof ProviderError && err.kind === 'dead_token') throw err;
};

/** A new six-digit PIN (leading zeros kept), from node:crypto. */
const newPin = () => String(randomInt(0, 1_000_000)).padStart(6, '0');

/**
 * Claim the connection for one run (unless another run holds an unexpired claim).
 *
 * @returns its WABA ids, or why not: `claimed` by another run, or no active connection.
 */
async function claim(
  db: Database,
  portalId: number,
  owner: string,
): Promise<{ wabaIds: string[] } | 'claimed' | 'inactive'> {
  const [row] = await db
    .update(connections)
    .set({
      onboardingOwner: owner,
      onboardingUntil: sql`now() + make_interval(secs => ${CLAIM_S})`,
    })
    .where(
      and(
        eq(connections.portalId, portalId),
        eq(connections.status, 'active'),
        or(isNull(connections.onboardingUntil), lt(connections.onboardingUntil, sql`now()`)),
      ),
    )
    .returning({ wabaIds: connections.wabaIds });
  if (row) return { wabaIds: row.wabaIds };
  const [active] = await db
    .select({ portalId: connections.portalId })
    .from(connections)
    .where(and(eq(connections.portalId, portalId), eq(connections.status, 'active')));
  return active ? 'claimed' : 'inactive';
}

/** Give the claim up (only this run's own). */
async function release(db: Database, portalId: number, owner: string): Promise<void> {
  await db
    .update(connections)
    .set({ onboardingOwner: null, onboardingUntil: null })
    .where(and(eq(connections.portalId, portalId), eq(connections.onboardingOwner, owner)));
}

/** A row (with a new sealed PIN) for each number not known yet. */
async function ensureRows(
  deps: { db: Database; keyring: Keyring },
  portalId: number,
  wabaId: string,
  numberIds: string[],
): Promise<void> {
  if (numberIds.length === 0) return;
  const rows = numberIds.map((phoneNumberId) => {
    const id = `onb_${randomBase62(16)}`;
    return {
      id,
      portalId,
      wabaId,
      phoneNumberId,
      pin: deps.keyring.seal(newPin(), portalId, PURPOSE, id),
    };
  });
  await deps.db.insert(numberOnboarding).values(rows).onConflictDoNothing();
}

/**
 * The onboarding of connections over the database, the keyring and partner's outbound-call path.
 *
 * @param deps.appId Portico's app id (PROVIDER_APP_ID): what the subscription check looks for;
 *   null when the provider is not configured.
 */
export function createNumberOnboarding(deps: {
  db: Database;
  keyring: Keyring;
  withProvider: WithProvider;
  appId: string | null;
  log: Logger;
}) {
  const { db, keyring, log } = deps;

  const ofWaba = (portalId: number, wabaId: string) =>
    and(eq(numberOnboarding.portalId, portalId), eq(numberOnboarding.wabaId, wabaId));

  /** Subscribe the app to the WABA and check it; the error in Portico's words, or null. */
  async function subscribe(cloud: CloudApi, portalId: number, wabaId: string) {
    try {
      await cloud.subscribeApp(wabaId);
      const apps = await cloud.subscribedAppIds(wabaId);
      if (deps.appId !== null && apps.includes(deps.appId)) return null;
      return 'Webhook subscription not confirmed: the provider does not list Portico’s app for this WhatsApp account.';
    } catch (err) {
      rethrowDeadToken(err);
      logProviderFailure(log, 'onboarding: webhook subscription', err, portalId);
      return `Webhook subscription failed: ${failureWords(err)}.`;
    }
  }

  /** Register each number of the WABA that is not registered and may be tried now. */
  async function registerNumbers(
    cloud: CloudApi,
    portalId: number,
    wabaId: string,
    subscriptionError: string | null,
  ): Promise<void> {
    const pending = await db
      .select()
      .from(numberOnboarding)
      .where(and(ofWaba(portalId, wabaId), eq(numberOnboarding.registered, false)));
    for (const row of pending) {
      const now = new Date();
      if (row.nextAttemptAt !== null && row.nextAttemptAt > now) continue;
      let outcome: { lastError: string | null; nextAttemptAt: Date | null; registered: boolean };
      try {
        await cloud.registerNumber(
          row.phoneNumberId,
          keyring.open(row.pin, portalId, PURPOSE, row.id),
        );
        outcome = { registered: true, lastError: subscriptionError, nextAttemptAt: null };
      } catch (err) {
        rethrowDeadToken(err);
        logProviderFailure(log, 'onboarding: number registration', err, portalId);
        outcome = { registered: false, ...registrationFailure(err, now) };
      }
      await db
        .update(numberOnboarding)
        .set({ ...outcome, updatedAt: new Date() })
        .where(and(eq(numberOnboarding.portalId, portalId), eq(numberOnboarding.id, row.id)));
    }
  }

  /** One WABA: its numbers, the subscription, the registrations. */
  async function onboardWaba(cloud: CloudApi, portalId: number, wabaId: string): Promise<void> {
    let numberIds: string[];
    try {
      numberIds = (await cloud.listPhoneNumbers(wabaId)).map((n) => n.id);
    } catch (err) {
      rethrowDeadToken(err);
      logProviderFailure(log, 'onboarding: phone numbers read', err, portalId);
      await db
        .update(numberOnboarding)
        .set({
          lastError: `Reading the numbers failed: ${failureWords(err)}.`,
          updatedAt: new Date(),
        })
        .where(ofWaba(portalId, wabaId));
      return;
    }
    await ensureRows(deps, portalId, wabaId, numberIds);
    const subscriptionError = await subscribe(cloud, portalId, wabaId);
    await db
      .update(numberOnboarding)
      .set({
        webhooksSubscribed: subscriptionError === null,
        updatedAt: new Date(),
        ...(subscriptionError !== null
          ? { lastError: subscriptionError }
          : {
              lastError: sql`case when ${numberOnboarding.registered} then null else ${numberOnboarding.lastError} end`,
            }),
      })
      .where(ofWaba(portalId, wabaId));
    await registerNumbers(cloud, portalId, wabaId, subscriptionError);
  }

  return {
    /**
     * Onboard the portal's active connection (every WABA, or only `onlyWabaId`). Never throws:
     * a provider or storage failure is kept per number and logged.
     *
     * @returns whether this call ran, or why not (another run holds the connection, none active).
     */
    async onboard(portalId: number, onlyWabaId?: string): Promise<OnboardOutcome> {
      const owner = randomBase62(12);
      let claimed: Awaited<ReturnType<typeof claim>>;
      try {
        claimed = await claim(db, portalId, owner);
      } catch (err) {
        logProviderFailure(log, 'onboarding: claim', err, portalId);
        return { ran: false, reason: 'failed' };
      }
      if (typeof claimed === 'string') return { ran: false, reason: claimed };
      const wabaIds = claimed.wabaIds.filter((w) => onlyWabaId === undefined || w === onlyWabaId);
      try {
        await deps.withProvider(portalId, 'onboarding', async (client, token, signal) => {
          const cloud = client.cloud(token, signal);
          for (const wabaId of wabaIds) await onboardWaba(cloud, portalId, wabaId);
        });
        log.info({ portalId, wabas: wabaIds.length }, 'onboarding: done');
        return { ran: true };
      } catch (err) {
        if (err instanceof ConnectionInactiveError) return { ran: false, reason: 'inactive' };
        logProviderFailure(log, 'onboarding', err, portalId);
        return { ran: false, reason: 'failed' };
      } finally {
        await release(db, portalId, owner).catch((err: unknown) =>
          logProviderFailure(log, 'onboarding: release', err, portalId),
        );
      }
    },

    /** Each number's onboarding state, by phone number id (no provider call). */
    async states(portalId: number, tx: Database | Tx = db): Promise<Map<string, OnboardingState>> {
      const rows = await tx
        .select({
          phoneNumberId: numberOnboarding.phoneNumberId,
          wabaId: numberOnboarding.wabaId,
          webhooksSubscribed: numberOnboarding.webhooksSubscribed,
          registered: numberOnboarding.registered,
          lastError: numberOnboarding.lastError,
          nextAttemptAt: numberOnboarding.nextAttemptAt,
        })
        .from(numberOnboarding)
        .where(eq(numberOnboarding.portalId, portalId));
      return new Map(rows.map(({ phoneNumberId, ...state }) => [phoneNumberId, state]));
    },
  };
}

export type NumberOnboarding = ReturnType<typeof createNumberOnboarding>;
