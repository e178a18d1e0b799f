/**
 * The SSRF guard of outbound webhooks: which addresses a delivery may connect to, decided on the
 * address the socket will actually use. The guard is a `lookup` for `node:http(s)`: it resolves
 * the host with `node:dns`, drops every address outside the public unicast ranges and hands the
 * socket only what remains, so the checked address is the connected one (a DNS answer that
 * changes between a check and the connection — rebinding — cannot slip through). Range
 * classification is ipaddr.js's (IANA special-purpose registries), not CIDR math of our own.
 *
 * @see https://owasp.org/www-community/attacks/Server_Side_Request_Forgery
 * @see https://www.iana.org/assignments/iana-ipv4-special-registry/
 * @see docs/webhooks.md "Address guard"
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * `public-only` (production): only public unicast addresses. `development-any-address`: no
 * check, so receivers on localhost work in development and tests. Named loudly on purpose.
 */
export type AddressPolicy = 'public-only' | 'development-any-address';

/** Thrown (as the socket's error) when every address of a host is refused. */
export class RefusedAddressError extends Error {
  readonly code = 'ERR_WEBHOOK_REFUSED_ADDRESS';
  constructor(what: string) {
    super(`Refused to connect to ${what}: not a public address.`);
    this.name = 'RefusedAddressError';
  }
}

/**
 * Whether `address` (an IPv4 or IPv6 literal) is public unicast. Loopback, private (RFC 1918,
 * unique local), link-local (169.254/16 — the cloud metadata service — and fe80::/10), carrier
 * NAT (100.64/10), multicast, reserved, unspecified and the IPv6 transition ranges are refused;
 * an IPv4-mapped IPv6 address is judged as its IPv4 address.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  return parsed.range() === 'unicast';
}

/** A resolver with `dns.lookup`'s `all: true` shape (tests may give their own). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) =>
      err ? reject(err) : resolve(addresses),
    );
  });

/**
 * The `lookup` option of `http.request`: resolves `hostname`, keeps only the addresses the
 * policy allows and fails with `RefusedAddressError` when none is left.
 */
export function guardedLookup(policy: AddressPolicy, resolver: Resolver): LookupFunction {
  return (hostname, options, callback) => {
    resolver(hostname).then(
      (found) => {
        const allowed =
          policy === 'public-only' ? found.filter((a) => isPublicAddress(a.address)) : found;
        const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
        const usable = allowed.filter((a) => wanted === 0 || a.family === wanted);
        const first = usable[0];
        if (!first) {
          callback(new RefusedAddressError(`the host's addresses`), '', 0);
          return;
        }
        if (options.all) callback(null, usable);
        else callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

/**
 * Check a host written as an IP literal (`node:net` never calls `lookup` for one).
 *
 * @throws RefusedAddressError under `public-only` for a non-public literal.
 */
export function checkLiteralHost(policy: AddressPolicy, hostname: string): void {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (policy === 'public-only' && isIP(bare) !== 0 && !isPublicAddress(bare)) {
    throw new RefusedAddressError(bare);
  }
}
