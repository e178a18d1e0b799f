/**
 * What the sandbox's Cloud API tests share: a person's grant and token, raw Graph calls, and
 * the inbound webhooks a recorded app received.
 */
import assert from 'node:assert/strict';
import { createProviderClient } from '../../src/partner/provider-client.ts';
import type { RecordedWebhooks, TestProvider } from '../helpers/provider.ts';

/** A webhook item as JSON (tests read its fields freely). */
export type Item = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- wire JSON

/**
 * A person's long-lived token, their first WABA and its two phone number ids; the WABA
 * subscribed and its numbers registered (`onboard`) unless `onboard: false`.
 */
export async function granted(
  p: TestProvider,
  userId: string,
  options: { onboard?: boolean } = {},
) {
  const client = createProviderClient({
    graphBaseUrl: p.sandbox.url,
    apiVersion: 'v21.0',
    appId: p.appId,
    appSecret: p.appSecret,
    redirectUri: p.redirectUri,
    timeoutMs: 5_000,
  });
  const code = p.sandbox.authorize({ appId: p.appId, redirectUri: p.redirectUri, userId });
  const short = await client.exchangeCode(code);
  const { accessToken: token } = await client.exchangeForLongLived(short.accessToken);
  const info = await client.inspectToken(token);
  const wabaId = info.granularScopes.find((g) => g.scope === 'whatsapp_business_management')!
    .targetIds[0]!;
  const numbers = (await client.cloud(token).listPhoneNumbers(wabaId)).map((n) => n.id);
  if (options.onboard !== false) await onboard(p, token, wabaId, numbers);
  return { token, wabaId, numbers: numbers as [string, string] };
}

/**
 * What a Tech Provider does after Embedded Signup: subscribe the app to the WABA and register
 * its numbers (PIN 123456), so the sandbox sends and delivers webhooks for them.
 */
export async function onboard(p: TestProvider, token: string, wabaId: string, numbers: string[]) {
  const subscribed = await call(p, 'POST', `/v21.0/${wabaId}/subscribed_apps`, { token });
  assert.equal(subscribed.status, 200, JSON.stringify(subscribed.body));
  for (const id of numbers) {
    const body = { messaging_product: 'whatsapp', pin: '123456' };
    const registered = await call(p, 'POST', `/v21.0/${id}/register`, { token, body });
    assert.equal(registered.status, 200, JSON.stringify(registered.body));
  }
}

/** A JSON request to the sandbox; the status and the parsed body. */
export async function call(
  p: TestProvider,
  method: string,
  path: string,
  options: { token?: string; body?: unknown } = {},
) {
  const res = await fetch(`${p.sandbox.url}${path}`, {
    method,
    headers: {
      ...(options.token && { authorization: `Bearer ${options.token}` }),
      ...(options.body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any -- test reads of wire JSON
}

/** POST /sandbox/inbound; asserts 200 and returns the wamid. */
export async function inbound(p: TestProvider, body: Record<string, unknown>): Promise<string> {
  const res = await call(p, 'POST', '/sandbox/inbound', { body });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.match(res.body.wamid, /^wamid\./);
  return res.body.wamid as string;
}

/** The `messages` change value whose `messages[0].id` is `wamid`, as the app received it. */
export function inboundValue(hooks: RecordedWebhooks, wamid: string) {
  for (const body of hooks.bodies as {
    object: string;
    entry: { id: string; changes: { field: string; value: Record<string, any> }[] }[]; // eslint-disable-line @typescript-eslint/no-explicit-any -- wire JSON
  }[])
    for (const e of body.entry)
      for (const c of e.changes)
        if (c.field === 'messages' && c.value.messages?.[0]?.id === wamid)
          return { object: body.object, wabaId: e.id, value: c.value };
  throw new Error(`no inbound webhook for ${wamid}`);
}

/** Every change of `field` the app received, in order. */
export function changesOf(hooks: RecordedWebhooks, field: string) {
  return (
    hooks.bodies as { entry: { id: string; changes: { field: string; value: unknown }[] }[] }[]
  ).flatMap((b) => b.entry.flatMap((e) => e.changes.filter((c) => c.field === field)));
}
