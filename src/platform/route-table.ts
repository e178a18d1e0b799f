/**
 * Every route the app registers, recorded by an `onRoute` hook installed before any plugin.
 * Tests walk it so that a new route cannot ship without the shared authentication cases and
 * without its place in the OpenAPI document.
 */
import type { FastifyInstance, RouteOptions } from 'fastify';

export interface RegisteredRoute {
  method: string;
  /** Full path with the prefix, Fastify syntax (`/support/tickets/:id`). */
  url: string;
  config: RouteOptions['config'];
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Routes in registration order (HEAD routes included). */
    routeTable: readonly RegisteredRoute[];
  }
}

/** Start recording; call before registering any route. */
export function recordRoutes(app: FastifyInstance): void {
  const table: RegisteredRoute[] = [];
  app.decorate('routeTable', table);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      table.push({ method, url: route.url, config: route.config });
    }
  });
}

/** A route's URL as a regular expression over concrete paths (`:id` one segment, `*` the rest). */
function pathPattern(url: string): RegExp {
  const source = url
    .split(/(:[A-Za-z0-9_]+(?:\([^)]*\))?|\*)/)
    .map((part) => {
      if (part === '*') return '.*';
      if (part.startsWith(':')) return '[^/]+';
      return part.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  return new RegExp(`^${source}$`);
}

const compiled = new WeakMap<readonly RegisteredRoute[], { size: number; patterns: RegExp[] }>();

/**
 * The methods the app routes for the concrete `path` (no query), sorted; empty when no route
 * matches it whatever the method. This is what a 405's `Allow` header lists.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.6
 */
export function allowedMethods(table: readonly RegisteredRoute[], path: string): string[] {
  let cache = compiled.get(table);
  // Routes are only ever appended, so the compiled list is extended, never rebuilt.
  if (!cache) compiled.set(table, (cache = { size: 0, patterns: [] }));
  for (; cache.size < table.length; cache.size++) {
    cache.patterns.push(pathPattern(table[cache.size]!.url));
  }
  const methods = new Set<string>();
  cache.patterns.forEach((pattern, i) => {
    if (pattern.test(path)) methods.add(table[i]!.method);
  });
  return [...methods].sort();
}
