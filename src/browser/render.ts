/**
 * Rendering of the server-side pages: preact components to an HTML string (auto-escaped by
 * preact-render-to-string), sent with the headers every page shares.
 */
import type { FastifyReply } from 'fastify';
import type { VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';

/** `<!doctype html>` + the rendered component. */
export function renderPage(page: VNode): string {
  return `<!doctype html>${renderToString(page)}`;
}

/**
 * Send a page. Pages are per user and may hold a one-time value (a new API token), so no cache
 * keeps them.
 */
export function sendPage(reply: FastifyReply, page: VNode, status = 200): FastifyReply {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(renderPage(page));
}
