/**
 * What the web pages and the authorization routes need from the partner connection service
 * (`services.partner`, built in `partner/`): this small surface only.
 */
import type { PartnerService } from '../partner/partner-service.ts';

export type { CompleteAuthorizationResult, ConnectionSummary } from '../partner/partner-service.ts';

export type PartnerPort = Pick<
  PartnerService,
  'authorizationUrl' | 'completeAuthorization' | 'connectionSummary' | 'revokeConnection'
>;
