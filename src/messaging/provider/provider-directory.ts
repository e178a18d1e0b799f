/**
 * A portal's sender numbers and templates, read from the provider and cached per portal for
 * `cacheMs` on this instance (docs/decisions.md "Messaging: numbers and templates cached"): a
 * send checks the sender and the template's approval without a provider round trip each time.
 * A template approved or rejected at the provider shows here after at most `cacheMs`, or at
 * once when its status webhook arrives (`invalidate`). Concurrent misses share one call.
 */
import { LRUCache } from 'lru-cache';
import type { MessageTemplate, MessagingProvider, PhoneNumber } from './provider-port.ts';

/** Portals whose lists are kept at once, per instance. */
const MAX_PORTALS = 10_000;

export interface ProviderDirectory {
  numbers(portalId: number): Promise<PhoneNumber[]>;
  templates(portalId: number): Promise<MessageTemplate[]>;
  invalidate(portalId: number): void;
}

function cached<T extends object>(
  load: (portalId: number) => Promise<T>,
  cacheMs: number,
): { get(portalId: number): Promise<T>; drop(portalId: number): void } {
  if (cacheMs === 0) return { get: load, drop: () => undefined };
  const cache = new LRUCache<number, T>({
    max: MAX_PORTALS,
    ttl: cacheMs,
    fetchMethod: (portalId) => load(portalId),
  });
  // Bumped by every drop: a read whose shared fetch was aborted by a drop (lru-cache rejects it
  // with "deleted") starts a fresh one instead of failing the send that waited on it.
  let drops = 0;
  return {
    async get(portalId) {
      for (;;) {
        const seen = drops;
        try {
          const value = await cache.fetch(portalId);
          if (value !== undefined) return value;
        } catch (err) {
          if (drops === seen) throw err; // the load's own error (provider, connection)
          continue;
        }
        if (drops === seen) throw new Error('provider read was aborted');
      }
    },
    drop: (portalId) => {
      drops++;
      cache.delete(portalId);
    },
  };
}

export function createProviderDirectory(
  provider: MessagingProvider,
  cacheMs: number,
): ProviderDirectory {
  const numbers = cached((id) => provider.listPhoneNumbers(id), cacheMs);
  const templates = cached((id) => provider.listTemplates(id), cacheMs);
  return {
    numbers: (portalId) => numbers.get(portalId),
    templates: (portalId) => templates.get(portalId),
    invalidate(portalId) {
      numbers.drop(portalId);
      templates.drop(portalId);
    },
  };
}
