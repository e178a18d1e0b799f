/**
 * `/messaging/campaigns` under the external API: create, read, list and change campaigns, move
 * them along their lifecycle, and read their report (JSON, or CSV with `Accept: text/csv`).
 * Thin: parse → service → envelope.
 *
 * @see docs/how-to/send-a-campaign.md
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../api-kit/request-principal.ts';
import { errorResponses, typed, type ApiInstance } from '../../api-kit/schema-kit.ts';
import type { ErrorCode } from '../../platform/errors.ts';
import { jsonBodyParser } from '../../platform/json-body.ts';
import {
  CampaignEnvelopeSchema,
  CampaignPageSchema,
  CampaignParamsSchema,
  CampaignReportSchema,
  ListCampaignsQuerySchema,
  NewCampaignBodySchema,
  PatchCampaignBodySchema,
  ReportQuerySchema,
  StartQuerySchema,
} from './campaigns-schemas.ts';
import type { CampaignsService } from './campaigns-service.ts';
import { reportCsv } from './campaign-report-csv.ts';

const TAGS = ['Messaging'];
const READ = { requiredScopes: ['messaging:reports:read'] as const };
const WRITE = { requiredScopes: ['messaging:send'] as const };
const BODY_ERRORS: ErrorCode[] = ['invalid_request', 'payload_too_large', 'unsupported_media_type'];
const CHECK_ERRORS: ErrorCode[] = [
  'not_connected',
  'number_not_ready',
  'template_not_approved',
  'provider_error',
  'provider_timeout',
];
const BASE = '/messaging/campaigns';

/** The route plugin; pass it in the external API's `routes` option. */
export function campaignsRoutes(campaigns: CampaignsService) {
  return async function routes(app: FastifyInstance): Promise<void> {
    const api = typed(app);
    api.addContentTypeParser(
      'application/merge-patch+json',
      { parseAs: 'string' },
      jsonBodyParser(api),
    );
    collectionRoutes(api, campaigns);
    itemRoutes(api, campaigns);
    lifecycleRoutes(api, campaigns);
    reportRoute(api, campaigns);
  };
}

function collectionRoutes(api: ApiInstance, campaigns: CampaignsService): void {
  api.post(
    BASE,
    {
      config: WRITE,
      schema: {
        summary: 'Create a campaign',
        description:
          'A `draft`: one approved `template` from the sender number `from` to an `audience` ' +
          '(`{tag}`, `{contactIds}` or `{all: true}`: every contact who opted in), with an ' +
          'optional `schedule.at` and `pace.perSecond`. Refused: a schedule in the past, an ' +
          'empty audience, a template not approved (or paused), a sender number not onboarded, ' +
          "a pace above the number's throughput.",
        tags: TAGS,
        body: NewCampaignBodySchema,
        response: {
          201: { ...CampaignEnvelopeSchema, description: 'The campaign, a draft.' },
          ...errorResponses([...BODY_ERRORS, ...CHECK_ERRORS]),
        },
      },
    },
    async (request, reply) =>
      reply.code(201).send({
        success: true as const,
        data: await campaigns.createCampaign(principalOf(request), request.body),
      }),
  );

  api.get(
    BASE,
    {
      config: READ,
      schema: {
        summary: 'List campaigns',
        description: 'Newest first, a page at a time; `status` filters.',
        tags: TAGS,
        querystring: ListCampaignsQuerySchema,
        response: {
          200: { ...CampaignPageSchema, description: 'A page of campaigns.' },
          ...errorResponses(['invalid_request']),
        },
      },
    },
    async (request) => ({
      success: true as const,
      data: await campaigns.listCampaigns(principalOf(request), request.query),
    }),
  );
}

function itemRoutes(api: ApiInstance, campaigns: CampaignsService): void {
  api.get(
    `${BASE}/:id`,
    {
      config: READ,
      schema: {
        summary: 'Read a campaign',
        description: 'Its status, counts (live while it runs) and cost.',
        tags: TAGS,
        params: CampaignParamsSchema,
        response: {
          200: { ...CampaignEnvelopeSchema, description: 'The campaign.' },
          ...errorResponses(['invalid_request', 'not_found']),
        },
      },
    },
    async (request) => ({
      success: true as const,
      data: await campaigns.getCampaign(principalOf(request), request.params.id),
    }),
  );

  api.patch(
    `${BASE}/:id`,
    {
      config: WRITE,
      schema: {
        summary: 'Change a campaign',
        description:
          'Until it starts: the fields given replace the stored ones (a scheduled campaign ' +
          'returns to `draft`: start it again). A started campaign: 409 `conflict`.',
        tags: TAGS,
        params: CampaignParamsSchema,
        body: PatchCampaignBodySchema,
        response: {
          200: { ...CampaignEnvelopeSchema, description: 'The campaign, changed.' },
          ...errorResponses([...BODY_ERRORS, ...CHECK_ERRORS, 'not_found', 'conflict']),
        },
      },
    },
    async (request) => ({
      success: true as const,
      data: await campaigns.patchCampaign(principalOf(request), request.params.id, request.body),
    }),
  );
}

function lifecycleRoutes(api: ApiInstance, campaigns: CampaignsService): void {
  api.post(
    `${BASE}/:id/start`,
    {
      config: WRITE,
      schema: {
        summary: 'Start a campaign',
        description:
          'Resolves the audience once into the stored snapshot (the ineligible counted in ' +
          '`skippedBy`), estimates the cost (recipients × the price of the template category) ' +
          'and moves the draft to `scheduled` (a schedule to come) or `running`. 402 ' +
          '`insufficient_credit` with the shortfall when the credit does not cover the ' +
          'estimate; 409 `conflict` when it is above `confirmCost`.',
        tags: TAGS,
        params: CampaignParamsSchema,
        querystring: StartQuerySchema,
        response: {
          200: { ...CampaignEnvelopeSchema, description: 'The campaign, started or scheduled.' },
          ...errorResponses([
            'invalid_request',
            'not_found',
            'conflict',
            'insufficient_credit',
            ...CHECK_ERRORS,
          ]),
        },
      },
    },
    async (request) => ({
      success: true as const,
      data: await campaigns.startCampaign(
        principalOf(request),
        request.params.id,
        request.query.confirmCost,
      ),
    }),
  );
  const move = (
    verb: 'pause' | 'resume' | 'cancel',
    summary: string,
    description: string,
    run: CampaignsService['pauseCampaign'],
  ) =>
    api.post(
      `${BASE}/:id/${verb}`,
      {
        config: WRITE,
        schema: {
          summary,
          description,
          tags: TAGS,
          params: CampaignParamsSchema,
          response: {
            200: { ...CampaignEnvelopeSchema, description: 'The campaign.' },
            ...errorResponses(['invalid_request', 'not_found', 'conflict']),
          },
        },
      },
      async (request) => ({
        success: true as const,
        data: await run(principalOf(request), request.params.id),
      }),
    );
  move(
    'pause',
    'Pause a campaign',
    'A running campaign: no instance hands another recipient over until it is resumed.',
    (p, id) => campaigns.pauseCampaign(p, id),
  );
  move('resume', 'Resume a campaign', 'A paused campaign runs again.', (p, id) =>
    campaigns.resumeCampaign(p, id),
  );
  move(
    'cancel',
    'Cancel a campaign',
    'Before it completes: nothing more is handed to the provider; its messages still queued ' +
      'fail with `campaign_cancelled` and their credit is released.',
    (p, id) => campaigns.cancelCampaign(p, id),
  );
}

function reportRoute(api: ApiInstance, campaigns: CampaignsService): void {
  api.get(
    `${BASE}/:id/report`,
    {
      config: READ,
      schema: {
        summary: 'Read a campaign report',
        description:
          'The campaign, its failures by code and a page of per-recipient outcomes (by `seq`). ' +
          'With `Accept: text/csv`: every recipient as CSV (seq, contactId, outcome, reason, ' +
          'messageId), streamed.',
        tags: TAGS,
        params: CampaignParamsSchema,
        querystring: ReportQuerySchema,
        response: {
          200: {
            description: 'The report, or its recipients as CSV when asked for.',
            content: {
              'application/json': { schema: CampaignReportSchema },
              'text/csv': {
                schema: Type.String({ description: 'seq,contactId,outcome,reason,messageId' }),
              },
            },
          },
          ...errorResponses(['invalid_request', 'not_found']),
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      if (/\btext\/csv\b/.test(request.headers.accept ?? '')) {
        const campaign = await campaigns.getCampaign(principal, request.params.id);
        // A stream, not the schema's JSON: the plain reply type (the schema documents it).
        return (reply as FastifyReply)
          .header('content-type', 'text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${campaign.id}.csv"`)
          .send(reportCsv(campaigns, principal, campaign.id));
      }
      return {
        success: true as const,
        data: await campaigns.report(principal, request.params.id, request.query),
      };
    },
  );
}
