/**
 * The provider's message templates of a portal's connected account: list (across its WABAs, a
 * page at a time), submit for review, delete. A template is checked (schema + Graph's rules,
 * templates-validation.ts) before it is forwarded, so a bad one costs no provider call.
 *
 * The list cursor is opaque to clients: base64url of `[wabaIndex, providerAfter, wabaIds]`, the
 * WABA being read and the provider's own `after` cursor within it; a cursor made for another
 * set of WABAs (the connection changed) is refused as invalid.
 *
 * @see https://developers.facebook.com/docs/whatsapp/business-management-api/message-templates
 * @see docs/decisions/0014-whatsapp-cloud-api.md
 */
import { AppError } from '../../platform/errors.ts';
import type { MessageTemplate, ProviderAdapter } from '../provider/provider-adapter.ts';
import type { ListTemplatesQuery, NewTemplateBody } from './templates-schemas.ts';
import { templateRuleErrors } from './templates-validation.ts';

/** Provider pages read for one page of ours at most (filters may skip many templates). */
const MAX_READS_PER_PAGE = 10;

export type TemplatesService = ReturnType<typeof createTemplatesService>;

interface Position {
  waba: number;
  after: string | null;
  key: string;
}

function invalidCursor(): AppError {
  return new AppError('invalid_request', 'The cursor is not valid; use the nextCursor of a page.', {
    details: [{ field: 'querystring.cursor', message: 'is not a cursor from a previous page' }],
  });
}

function encode(p: Position): string {
  return Buffer.from(JSON.stringify([p.waba, p.after, p.key]), 'utf8').toString('base64url');
}

function decode(cursor: string, key: string): Position {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (!Array.isArray(value) || value.length !== 3) throw invalidCursor();
  const [waba, after, k] = value as unknown[];
  if (typeof waba !== 'number' || !Number.isInteger(waba) || waba < 0) throw invalidCursor();
  if (after !== null && (typeof after !== 'string' || after.length > 200)) throw invalidCursor();
  if (k !== key) throw invalidCursor();
  return { waba, after, key };
}

/**
 * Which WABA a write goes to: the one named (it must be the connection's), else the only one.
 *
 * @throws AppError `invalid_request` when none is named and there are several, or the named
 *   one is not the connection's.
 */
function chooseWaba(wabaIds: string[], named: string | undefined, field: string): string {
  if (named !== undefined) {
    if (!wabaIds.includes(named))
      throw new AppError('invalid_request', 'The wabaId is not an account of this connection.', {
        details: [{ field, message: 'is not a WhatsApp Business Account of the connection' }],
      });
    return named;
  }
  if (wabaIds.length > 1)
    throw new AppError(
      'invalid_request',
      `The connection has ${wabaIds.length} WhatsApp Business Accounts; say which in wabaId.`,
      { details: [{ field, message: 'is required when the connection has several accounts' }] },
    );
  return wabaIds[0] as string;
}

export function createTemplatesService(deps: {
  provider: Pick<
    ProviderAdapter,
    'wabaIds' | 'templatesPage' | 'createTemplate' | 'deleteTemplate'
  >;
}) {
  const { provider } = deps;
  return {
    /**
     * A page of the portal's templates, WABA by WABA.
     *
     * @throws AppError `not_connected`, `invalid_request` (cursor, wabaId), `provider_error`,
     *   `provider_timeout`.
     */
    async listTemplates(
      portalId: number,
      query: ListTemplatesQuery,
    ): Promise<{ items: MessageTemplate[]; nextCursor: string | null }> {
      const all = await provider.wabaIds(portalId);
      const wabaIds = query.wabaId ? [chooseWaba(all, query.wabaId, 'querystring.wabaId')] : all;
      const key = wabaIds.join(',');
      let pos: Position = query.cursor ? decode(query.cursor, key) : { waba: 0, after: null, key };
      const items: MessageTemplate[] = [];
      const wanted = (t: MessageTemplate) =>
        (!query.status || t.status === query.status) &&
        (!query.name || t.name.includes(query.name));
      // Fill the page from as many provider pages and WABAs as it takes (the filters apply
      // here: Graph's list filters are not in every API version). A page ends at the end of a
      // provider page, so a cursor never points into the middle of one.
      for (let reads = 0; items.length < query.limit && pos.waba < wabaIds.length; reads++) {
        if (reads >= MAX_READS_PER_PAGE) break;
        const wabaId = wabaIds[pos.waba] as string;
        const after = pos.after;
        const page = await provider.templatesPage(portalId, wabaId, {
          limit: query.limit - items.length,
          ...(after && { after }),
        });
        items.push(...page.items.filter(wanted));
        pos = page.after
          ? { waba: pos.waba, after: page.after, key }
          : { waba: pos.waba + 1, after: null, key };
      }
      return { items, nextCursor: pos.waba < wabaIds.length ? encode(pos) : null };
    },

    /**
     * Check a template and submit it for the provider's review.
     *
     * @returns the provider's id and status (`PENDING` for a new template) and the WABA.
     * @throws AppError `invalid_request` (`details` per broken rule), `conflict` (name and
     *   language exist), `not_connected`, `provider_error`, `provider_timeout`.
     */
    async createTemplate(portalId: number, body: NewTemplateBody) {
      const details = templateRuleErrors(body);
      if (details.length > 0)
        throw new AppError('invalid_request', 'The template breaks the provider’s rules.', {
          details,
        });
      const wabaId = chooseWaba(await provider.wabaIds(portalId), body.wabaId, 'body.wabaId');
      const { name, language, category, components } = body;
      const created = await provider.createTemplate(portalId, wabaId, {
        name,
        language,
        category,
        components,
      });
      return {
        id: created.id,
        name,
        language,
        category: created.category,
        status: created.status,
        wabaId,
      };
    },

    /**
     * Delete the template `name` (every language of it) at the provider.
     *
     * @throws AppError `not_found` (no such template), `not_connected`, `invalid_request`
     *   (wabaId), `provider_error`, `provider_timeout`.
     */
    async deleteTemplate(portalId: number, name: string, namedWaba?: string) {
      const wabaId = chooseWaba(await provider.wabaIds(portalId), namedWaba, 'querystring.wabaId');
      try {
        await provider.deleteTemplate(portalId, wabaId, name);
      } catch (err) {
        // The name passed our schema, so Graph's "invalid parameter" here means "no such name".
        if (err instanceof AppError && err.code === 'invalid_request')
          throw new AppError('not_found', 'The account has no template of that name.', {
            cause: err,
          });
        throw err;
      }
      return { name, wabaId, deleted: true as const };
    },
  };
}
