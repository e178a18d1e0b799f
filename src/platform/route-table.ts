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
