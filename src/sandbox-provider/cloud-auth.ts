/**
 * Who may call a WhatsApp Cloud API node: a live person's token (`liveUserToken`: 401 with code
 * 190 when invalid or dead)
 * that holds one of the node's permissions (else Graph code 10) and whose grant covers the WABA
 * (else code 200, "Permissions error"), as Graph refuses an app acting on an asset it was not
 * given.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/get-started#permissions
 * @see https://developers.facebook.com/docs/graph-api/guides/error-handling
 */
import type { FastifyRequest } from 'fastify';
import { isSandboxWaba } from './cloud-state.ts';
import { liveUserToken } from './graph-auth.ts';
import type { GraphFault } from './graph-errors.ts';
import type { TokenRecord } from './sandbox-state.ts';
import type { SurfaceOptions } from './surface.ts';

export const MANAGEMENT = 'whatsapp_business_management';
export const MESSAGING = 'whatsapp_business_messaging';

/**
 * The token's record when it may act on `wabaId` with one of `permissions`.
 *
 * @returns `{ record }`, or `{ status, fault }` to answer with `graphError`.
 */
export function wabaAccess(
  request: FastifyRequest,
  options: Pick<SurfaceOptions, 'state' | 'noteCall'>,
  wabaId: string,
  permissions: readonly string[],
): { record: TokenRecord } | { status: number; fault: GraphFault } {
  const live = liveUserToken(request, options);
  // The Cloud API answers an invalid or dead token with HTTP 401 (code 190).
  if ('fault' in live) return { status: 401, fault: live.fault };
  const { record } = live;
  if (!record.permissions.some((p) => permissions.includes(p)))
    return {
      status: 403,
      fault: { code: 10, message: '(#10) Application does not have permission for this action' },
    };
  if (!isSandboxWaba(wabaId) || !record.assetIds.includes(wabaId))
    return { status: 403, fault: { code: 200, message: '(#200) Permissions error' } };
  return { record };
}
