/**
 * Sending a draft, over real storage: recipient expansion (contacts by id and by tag, phones,
 * one message per distinct phone), per-recipient refusals, sent at most once (also when two
 * sends race), and a draft whose every recipient was refused stays unsent.
 *
 * The send port is a recorder here: the messaging send service (`POST /messaging/messages`) is
 * another branch's; once merged, services.ts wires it and this file keeps testing the drafts'
 * own rules, which do not depend on how a single message is queued.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Principal } from '../../src/accounts/principal.ts';
import {
  createDraftsService,
  type OutgoingMessage,
} from '../../src/messaging/drafts/drafts-service.ts';
import { AppError } from '../../src/platform/errors.ts';
import { createKeyring, generateKeyEntry, parseKeySpec } from '../../src/platform/keyring.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';

const keyring = createKeyring(parseKeySpec(generateKeyEntry('drafts')));

for (const backend of backends()) {
  describe(`sending a draft (${backend.name})`, () => {
    test('one message per distinct recipient; refusals reported; sent once', async (t) => {
      const { services } = await buildTestApp(t, backend);
      const portal = await createPortal(services);
      const principal = { portalId: portal.portalId, userId: portal.userId } as Principal;
      const contact = async (phone: string, tags: string[]) =>
        (
          await services.contacts.createContact({
            principal,
            input: {
              phone,
              tags,
              ...(phone.endsWith('9') && { consent: { whatsapp: 'opted_out' } }),
            },
          })
        ).body.data.id;
      const ada = await contact('+16505550001', ['vip']);
      const bob = await contact('+16505550002', ['vip']);
      const eve = await contact('+16505550009', ['vip']);
      await contact('+16505550003', ['other']);

      const sent: OutgoingMessage[] = [];
      const drafts = createDraftsService({
        db: services.storage.db,
        keyring,
        isConnected: async () => true,
        send: async (_p, m) => {
          if (m.contactId === eve) throw new AppError('invalid_request', 'opted out (recorder)');
          sent.push(m);
          return { id: `msg_${sent.length}` };
        },
      });
      const draft = await drafts.createDraft(principal, {
        type: 'text',
        text: { body: 'Hello' },
        from: '1000123001',
        recipients: {
          contactIds: [ada, 'ctc_unknown0'],
          tag: 'vip',
          phones: ['+1 650 555 0002', '+44 20 7946 0958'],
        },
      });
      const outcome = await drafts.sendDraft(principal, draft.id);
      assert.equal(outcome.queued, 4);
      assert.deepEqual(
        outcome.refused.map((r) => r.recipient),
        [eve],
      );
      assert.deepEqual(
        sent.map((m) => m.contactId ?? m.to),
        [ada, bob, 'ctc_unknown0', '+442079460958'],
        "bob's phone listed again is not sent twice",
      );
      assert.ok(
        sent.every((m) => m.type === 'text' && m.text.body === 'Hello' && m.from === '1000123001'),
      );
      assert.ok(outcome.sentAt);
      const stored = await drafts.getDraft(principal, draft.id);
      assert.deepEqual(stored.sendResult, { queued: 4, refused: 1 });
      await assert.rejects(drafts.sendDraft(principal, draft.id), { code: 'conflict' });
      await assert.rejects(drafts.patchDraft(principal, draft.id, { from: null }), {
        code: 'conflict',
      });
      assert.equal(sent.length, 4, 'nothing sent the second time');
    });

    test('two sends at once: exactly one sends', async (t) => {
      const { services } = await buildTestApp(t, backend);
      const portal = await createPortal(services);
      const principal = { portalId: portal.portalId, userId: portal.userId } as Principal;
      let calls = 0;
      const drafts = createDraftsService({
        db: services.storage.db,
        keyring,
        isConnected: async () => true,
        send: async () => {
          calls++;
          await new Promise((r) => setTimeout(r, 20));
        },
      });
      const draft = await drafts.createDraft(principal, {
        type: 'template',
        template: { name: 'hello', language: 'en_US', parameters: [] },
        recipients: { phones: ['+16505550001', '+16505550002'] },
      });
      const results = await Promise.allSettled([
        drafts.sendDraft(principal, draft.id),
        drafts.sendDraft(principal, draft.id),
      ]);
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      assert.equal((rejected.reason as AppError).code, 'conflict');
      assert.equal(calls, 2);
    });

    test('every recipient refused: nothing sent, the draft stays unsent and can be sent later', async (t) => {
      const { services } = await buildTestApp(t, backend);
      const portal = await createPortal(services);
      const principal = { portalId: portal.portalId, userId: portal.userId } as Principal;
      let refuse = true;
      const drafts = createDraftsService({
        db: services.storage.db,
        keyring,
        isConnected: async () => true,
        send: async () => {
          if (refuse) throw new AppError('invalid_request', 'outside the window (recorder)');
        },
      });
      const draft = await drafts.createDraft(principal, {
        type: 'text',
        text: { body: 'Hi' },
        recipients: { phones: ['+16505550001'] },
      });
      const first = await drafts.sendDraft(principal, draft.id);
      assert.deepEqual(
        { ...first, refused: first.refused.length },
        { queued: 0, refused: 1, sentAt: null },
      );
      assert.equal((await drafts.getDraft(principal, draft.id)).sentAt, null);
      refuse = false;
      const second = await drafts.sendDraft(principal, draft.id);
      assert.equal(second.queued, 1);
      assert.ok(second.sentAt);
      const empty = await drafts.createDraft(principal, { type: 'text', text: { body: 'Hi' } });
      await assert.rejects(drafts.sendDraft(principal, empty.id), { code: 'invalid_request' });
    });
  });
}
