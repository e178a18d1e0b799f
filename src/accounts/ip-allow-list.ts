/**
 * An API key's IP allow-list: addresses and CIDR ranges, IPv4 and IPv6, parsed and matched by
 * ipaddr.js (no address arithmetic of our own).
 *
 * Entries are normalised when a key is created (`parseAllowedIps`): an address becomes its
 * range (`/32`, `/128`), a range its network address (`203.0.113.7/24` → `203.0.113.0/24`),
 * IPv6 in its RFC 5952 form. A request's address is matched as given by Fastify's `request.ip`,
 * i.e. after the `TRUST_PROXY` settings; an IPv4-mapped IPv6 address (`::ffff:203.0.113.7`, a
 * dual-stack socket) is matched as the IPv4 address it carries.
 *
 * @see https://www.rfc-editor.org/rfc/rfc4632#section-3.1 (CIDR prefix notation)
 * @see https://www.rfc-editor.org/rfc/rfc5952 (IPv6 text form)
 * @see docs/how-to/restrict-an-api-key.md
 */
import ipaddr from 'ipaddr.js';
import { UsageError } from '../platform/errors.ts';

/** Most entries in one key's list. */
export const MAX_ALLOWED_IPS = 100;

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** The canonical text of one entry, or null when it is not an address or a CIDR range. */
function normalizeEntry(raw: string): string | null {
  const entry = raw.trim();
  const slash = entry.indexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  let bits: number;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  // Only dotted-quad IPv4 (never `127.1` or hex forms) and standard IPv6 text.
  if (ipaddr.IPv4.isValidFourPartDecimal(address)) parsed = ipaddr.IPv4.parse(address);
  else if (ipaddr.IPv6.isValid(address) && !address.includes('%'))
    parsed = ipaddr.IPv6.parse(address);
  else return null;
  const max = parsed.kind() === 'ipv4' ? 32 : 128;
  if (slash === -1) bits = max;
  else {
    const prefix = entry.slice(slash + 1);
    if (!/^[0-9]{1,3}$/.test(prefix)) return null;
    bits = Number(prefix);
    if (bits > max) return null;
  }
  const network =
    parsed.kind() === 'ipv4'
      ? ipaddr.IPv4.networkAddressFromCIDR(`${parsed.toString()}/${bits}`)
      : ipaddr.IPv6.networkAddressFromCIDR(`${parsed.toString()}/${bits}`);
  return `${network.toString()}/${bits}`;
}

/**
 * Validate and normalise an allow-list given by a person or a client.
 *
 * @param entries addresses (`203.0.113.7`, `2001:db8::1`) and CIDR ranges (`203.0.113.0/24`,
 *   `2001:db8::/32`); duplicates are dropped, order kept.
 * @returns the canonical entries; null for an absent or empty list (the key works from any address).
 * @throws UsageError naming each entry that is neither, or over `MAX_ALLOWED_IPS` entries.
 */
export function parseAllowedIps(entries: readonly string[] | null | undefined): string[] | null {
  if (!entries) return null;
  const given = entries.map((e) => e.trim()).filter((e) => e !== '');
  if (given.length === 0) return null;
  if (given.length > MAX_ALLOWED_IPS)
    throw new UsageError(`Give at most ${MAX_ALLOWED_IPS} addresses or ranges.`);
  const bad: string[] = [];
  const out = new Set<string>();
  for (const entry of given) {
    const normalized = normalizeEntry(entry);
    if (normalized === null) bad.push(entry);
    else out.add(normalized);
  }
  if (bad.length > 0) {
    throw new UsageError(
      `Not an IP address or CIDR range: ${bad.map((b) => JSON.stringify(b.slice(0, 60))).join(', ')}. ` +
        'Give addresses (203.0.113.7, 2001:db8::1) or ranges (203.0.113.0/24, 2001:db8::/32).',
    );
  }
  return [...out];
}

/** A compiled allow-list: `allows(request.ip)`. */
export interface IpAllowList {
  allows(address: string): boolean;
}

/**
 * Compile stored (normalised) entries once, for the cached principal; an entry that no longer
 * parses matches nothing (fail closed).
 */
export function compileAllowList(entries: readonly string[]): IpAllowList {
  const ranges: Range[] = [];
  for (const entry of entries) {
    try {
      ranges.push(ipaddr.parseCIDR(entry));
    } catch {
      // Stored lists are normalised at creation; a hand-edited bad entry allows nothing.
    }
  }
  return {
    allows(address) {
      if (!ipaddr.isValid(address)) return false;
      // `process` turns an IPv4-mapped IPv6 address into the IPv4 address it carries.
      const client = ipaddr.process(address);
      const kind = client.kind();
      return ranges.some(([range, bits]) => range.kind() === kind && client.match(range, bits));
    },
  };
}
