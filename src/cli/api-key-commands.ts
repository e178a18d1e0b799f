/**
 * The commands for a portal's API keys: `key create` (the secret printed once), `key list`,
 * `key rotate` (a new secret, the previous one working for an overlap) and `key revoke`. They
 * run the service the API's `/keys` and the settings page use (`accounts/api-keys-service.ts`),
 * audited as the CLI (`system:cli`); the scopes are checked against the whole catalog, as for
 * the main administrator.
 *
 * @see docs/how-to/restrict-an-api-key.md
 * @see docs/reference/cli.md
 */
import { Type } from 'typebox';
import type { ApiKeyView } from '../accounts/api-keys-service.ts';
import { cliActor, defineCommand, list, Portal, portalOption, wholeNumber } from './command.ts';

/** Longest overlap of `key rotate`, in seconds (the service's 24 hours). */
const MAX_OVERLAP_S = 86_400;

const KeyId = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });
const keyIdArgument = {
  value: '<id>',
  description: 'the key id (from `key list`)',
  parse: wholeNumber(1, 2_147_483_647),
};

/** `2027-01-31T00:00:00.000Z` → `2027-01-31 00:00 UTC`. */
const utc = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

/** One key in one line: id, name, hint, scopes, expiry, addresses, last use. */
function keyLine(k: ApiKeyView): string {
  return [
    `${k.id}`,
    k.name,
    `…${k.hint}`,
    k.scopes.join(','),
    k.expiresAt ? `expires ${utc(k.expiresAt)}` : 'never expires',
    k.allowedIps ? `from ${k.allowedIps.join(',')}` : 'from any address',
    k.lastUsedAt ? `last used ${utc(k.lastUsedAt)} from ${k.lastUsedIp ?? '?'}` : 'not used yet',
    ...(k.previousSecretValidUntil
      ? [`previous secret works until ${utc(k.previousSecretValidUntil)}`]
      : []),
  ].join('  ');
}

export const keyCreate = defineCommand({
  name: 'key create',
  description: 'create an API key of a portal; prints its secret once',
  args: Type.Object({
    portal: Portal,
    name: Type.String({ maxLength: 1000 }),
    scopes: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50 }),
    allowedIps: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 })),
    expiresAt: Type.Optional(Type.String({ maxLength: 100 })),
  }),
  options: {
    portal: portalOption,
    name: { value: '<name>', description: 'what the key is for, e.g. "billing export"' },
    scopes: { value: '<a,b,..>', description: 'its scopes (see `scopes`)', parse: list },
    allowedIps: {
      value: '<cidr,..>',
      description: 'the only addresses it works from, e.g. 203.0.113.0/24 (default: any)',
      parse: list,
    },
    expiresAt: {
      value: '<iso>',
      description: 'when it stops working, ISO 8601, e.g. 2027-01-31T00:00:00Z (default: never)',
    },
  },
  run: async (services, a) => {
    const portalId = await services.accounts.portalIdFor(a.portal);
    return services.apiKeys.create({
      portalId,
      name: a.name,
      scopes: a.scopes,
      allowedIps: a.allowedIps,
      expiresAt: a.expiresAt,
      actor: await cliActor(),
    });
  },
  print: ({ key, secret }) =>
    [keyLine(key), `API key secret (shown once, store it now): ${secret}`].join('\n'),
});

export const keyList = defineCommand({
  name: 'key list',
  description: "list a portal's API keys (never their secrets)",
  args: Type.Object({ portal: Portal }),
  options: { portal: portalOption },
  run: async (services, a) => services.apiKeys.list(await services.accounts.portalIdFor(a.portal)),
  print: (keys) => (keys.length === 0 ? 'No API keys.' : keys.map(keyLine).join('\n')),
});

export const keyRotate = defineCommand({
  name: 'key rotate',
  description:
    'give an API key a new secret (printed once); the previous one works for --overlap seconds',
  args: Type.Object({
    portal: Portal,
    id: KeyId,
    overlap: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_OVERLAP_S })),
  }),
  options: {
    portal: portalOption,
    overlap: {
      value: '<seconds>',
      description: `how long the previous secret keeps working, 0-${MAX_OVERLAP_S} (default 0: it stops at once)`,
      parse: wholeNumber(0, MAX_OVERLAP_S),
    },
  },
  positionals: { id: keyIdArgument },
  run: async (services, a) =>
    services.apiKeys.rotate({
      portalId: await services.accounts.portalIdFor(a.portal),
      keyId: a.id,
      overlapSeconds: a.overlap ?? 0,
      actor: await cliActor(),
    }),
  print: ({ key, secret }) =>
    [
      keyLine(key),
      `New secret (shown once, store it now): ${secret}`,
      key.previousSecretValidUntil
        ? `The previous secret works until ${utc(key.previousSecretValidUntil)}.`
        : 'The previous secret no longer works.',
    ].join('\n'),
});

export const keyRevoke = defineCommand({
  name: 'key revoke',
  description: 'revoke an API key: it stops working at once, on every instance',
  args: Type.Object({ portal: Portal, id: KeyId }),
  options: { portal: portalOption },
  positionals: { id: keyIdArgument },
  run: async (services, a) =>
    services.apiKeys.revoke({
      portalId: await services.accounts.portalIdFor(a.portal),
      keyId: a.id,
      actor: await cliActor(),
    }),
  print: (r) => `API key ${r.id} revoked; it no longer works.`,
});
