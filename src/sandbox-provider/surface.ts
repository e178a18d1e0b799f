/**
 * The contract of one emulated provider surface (the dialog, the token endpoint, a family of
 * Graph nodes, the person's apps page): a Fastify plugin that `startSandboxProvider` registers,
 * given the sandbox's shared state. A surface owns its routes, schemas and wire format; it keeps
 * nothing of its own between requests, so every surface sees the same apps, grants and tokens.
 *
 * @see https://fastify.dev/docs/latest/Reference/Plugins/
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { SandboxAppConfig, SandboxState } from './sandbox-state.ts';

/**
 * Attach who a request concerns to its entry in the call log (tests assert which person's token
 * a call used). Either id may be omitted; a later note for the same request overwrites.
 */
export type NoteCall = (request: FastifyRequest, userId?: string, appId?: string) => void;

/** What every surface is registered with. */
export interface SurfaceOptions {
  state: SandboxState;
  /** The person the dialog signs in as unless the form names another (Graph-like digits). */
  defaultUserId: string;
  noteCall: NoteCall;
}

/** One emulated provider surface. */
export type SandboxSurface = FastifyPluginAsync<SurfaceOptions>;

/** `{version}` of a Graph path, e.g. `v21.0` (the sandbox accepts any, as Graph serves several). */
export const VersionParams = Type.Object({
  version: Type.String({ pattern: '^v[0-9]+\\.[0-9]+$' }),
});

/** Response schemas of the HTML pages (the dialog and the person's side). */
export const HtmlResponse = { 200: Type.String(), 400: Type.String(), 404: Type.String() };

/** The name the provider shows for an app: its registered name, or one made from its id. */
export function appName(app: SandboxAppConfig): string {
  return app.name ?? `Sandbox app ${app.appId}`;
}
