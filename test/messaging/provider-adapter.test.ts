/**
 * The provider adapter's cache: a template status webhook that drops a portal's lists while a
 * send is waiting on their read makes the send read again, never fail ("deleted"); a read's own
 * failure still fails; a list read for other WABAs (a reconnection) is read again.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  createProviderAdapter,
  type MessageTemplate,
  type ProviderPhoneNumber,
} from '../../src/messaging/provider/provider-adapter.ts';
import type { CloudApi } from '../../src/partner/cloud-api/cloud-api.ts';
import type { WithCloudApi } from '../../src/partner/outbound-calls.ts';

const template = (status: string): MessageTemplate => ({
  id: '1',
  name: 'order_shipped',
  language: 'en_US',
  category: 'UTILITY',
  status,
  qualityScore: 'UNKNOWN',
  components: [],
  wabaId: '102000000101',
});

const number = (id: string, wabaId: string): ProviderPhoneNumber => ({
  id,
  displayPhoneNumber: '+1 555 0100',
  verifiedName: 'Shop',
  qualityRating: 'GREEN',
  messagingLimitTier: 'TIER_2K',
  messagingLimitPerDay: 2000,
  wabaId,
});

/** partner/'s side: `withCloudApi` hands `fn` these Cloud API calls (no token anywhere). */
function partnerWith(cloud: Partial<CloudApi>, wabaIds: () => string[] = () => ['102000000101']) {
  const withCloudApi: WithCloudApi = (_portalId, _what, fn) =>
    fn(cloud as CloudApi, new AbortController().signal);
  return {
    wabaIdsOf: () => Promise.resolve(wabaIds()),
    withCloudApi,
    onboardingStates: () => Promise.resolve(new Map()),
  };
}

test('a drop during a shared read starts a fresh read; the waiting caller gets its result', async () => {
  let reads = 0;
  const releases: (() => void)[] = [];
  // Template reads wait until released; the second read sees the approval.
  const partner = partnerWith({
    listTemplates: () => {
      const status = reads++ === 0 ? 'PENDING' : 'APPROVED';
      return new Promise((resolve) =>
        releases.push(() => resolve({ items: [template(status)], after: null })),
      );
    },
  });
  const provider = createProviderAdapter({ partner, cacheMs: 60_000 });
  const waiting = provider.templates(7);
  await new Promise((resolve) => setImmediate(resolve));
  provider.invalidate(7); // the status webhook arrives while the read is in flight
  releases.shift()!();
  await new Promise((resolve) => setImmediate(resolve));
  releases.shift()!();
  const templates = await waiting;
  assert.equal(templates[0]!.status, 'APPROVED');
  assert.equal(reads, 2);
});

test("a read's own failure still fails the caller", async () => {
  const partner = partnerWith({
    listPhoneNumbers: () => Promise.reject(new Error('provider down')),
  });
  const provider = createProviderAdapter({ partner, cacheMs: 60_000 });
  await assert.rejects(provider.numbers(7), /provider down/);
});

test('a cached list serves only the WABAs it was read for', async () => {
  let wabas = ['102000000101'];
  let reads = 0;
  const partner = partnerWith(
    {
      listPhoneNumbers: (wabaId) => {
        reads++;
        return Promise.resolve([number(`9${wabaId}`, wabaId)]);
      },
    },
    () => wabas,
  );
  const provider = createProviderAdapter({ partner, cacheMs: 60_000 });
  assert.equal((await provider.numbers(7))[0]!.wabaId, '102000000101');
  assert.equal((await provider.numbers(7))[0]!.wabaId, '102000000101');
  assert.equal(reads, 1, 'the second call is served from the cache');
  wabas = ['102000000202']; // reconnected to another account
  assert.equal((await provider.numbers(7))[0]!.wabaId, '102000000202');
  assert.equal(reads, 2);
  wabas = [];
  await assert.rejects(provider.numbers(7), { code: 'not_connected' });
});
