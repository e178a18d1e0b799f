/**
 * The provider directory's cache: a template status webhook that drops a portal's lists while a
 * send is waiting on their read makes the send read again, never fail ("deleted").
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createProviderDirectory } from '../../src/messaging/provider/provider-directory.ts';
import type {
  MessageTemplate,
  MessagingProvider,
} from '../../src/messaging/provider/provider-port.ts';

const template = (status: string): MessageTemplate => ({
  id: '1',
  name: 'order_shipped',
  language: 'en_US',
  category: 'UTILITY',
  status,
  components: [],
  wabaId: '102000000101',
});

test('a drop during a shared read starts a fresh read; the waiting caller gets its result', async () => {
  let reads = 0;
  const releases: (() => void)[] = [];
  // A provider whose template reads wait until released; the second read sees the approval.
  const provider: MessagingProvider = {
    sendMessage: () => Promise.reject(new Error('not used')),
    listPhoneNumbers: () => Promise.resolve([]),
    listTemplates: () => {
      const status = reads++ === 0 ? 'PENDING' : 'APPROVED';
      return new Promise((resolve) => releases.push(() => resolve([template(status)])));
    },
  };
  const directory = createProviderDirectory(provider, 60_000);
  const waiting = directory.templates(7);
  await new Promise((resolve) => setImmediate(resolve));
  directory.invalidate(7); // the status webhook arrives while the read is in flight
  releases.shift()!();
  await new Promise((resolve) => setImmediate(resolve));
  releases.shift()!();
  const templates = await waiting;
  assert.equal(templates[0]!.status, 'APPROVED');
  assert.equal(reads, 2);
});

test("a read's own failure still fails the caller", async () => {
  const provider: MessagingProvider = {
    sendMessage: () => Promise.reject(new Error('not used')),
    listPhoneNumbers: () => Promise.reject(new Error('provider down')),
    listTemplates: () => Promise.resolve([]),
  };
  const directory = createProviderDirectory(provider, 60_000);
  await assert.rejects(directory.numbers(7), /provider down/);
});
