/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The account signals on the sandbox's apps page: for every WABA some app was granted, its
 * phone numbers (quality rating and messaging limit tier, with buttons that change them) and
 * its templates (status and quality, with buttons that change the quality, pause or resume),
 * each change sent to the apps as the provider's webhook (cloud-signals.ts):
 *
 * - `POST /sandbox/signals/number`   form `phone_number_id`, and `quality_rating` (GREEN, YELLOW,
 *   RED) or `messaging_limit_tier` (TIER_50 … TIER_UNLIMITED) → a result page.
 * - `POST /sandbox/signals/template` form `waba_id`, `template_id`, `action` (GREEN, YELLOW,
 *   RED, pause, resume) → a result page.
 * - `POST /sandbox/signals/account`  form `waba_id`, `event` (ACCOUNT_VIOLATION,
 *   ACCOUNT_RESTRICTION, DISABLED_UPDATE) → a result page.
 *
 * The rest of the account's standing (categories, marketing preferences, alerts, limits, display
 * names) is standing-page.tsx's.
 *
 * Unknown numbers, templates or WABAs → 404, bad input → 400.
 *
 * @see https://developers.facebook.com/docs/whatsapp/business-management-api/webhooks/components
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { phoneNumberIdsOf } from './cloud-state.ts';
import {
  changeNumber,
  changeTemplate,
  accountUpdate,
  ACCOUNT_EVENTS,
  currentNumber,
  qualityOf,
  QUALITY_RATINGS,
  TIERS,
} from './cloud-signals.ts';
import { appsOfWaba } from './cloud-webhooks.ts';
import { answerSignal, StandingForms } from './standing-page.tsx';
import type { SandboxState } from './sandbox-state.ts';
import { HtmlResponse, type SurfaceOptions } from './surface.ts';

const NumberForm = Type.Object({
  phone_number_id: Type.String({ pattern: '^[0-9]{1,30}$' }),
  quality_rating: Type.Optional(Type.Union(QUALITY_RATINGS.map((q) => Type.Literal(q)))),
  messaging_limit_tier: Type.Optional(Type.Union(TIERS.map((t) => Type.Literal(t)))),
});
const TemplateForm = Type.Object({
  waba_id: Type.String({ pattern: '^[0-9]{1,30}$' }),
  template_id: Type.String({ pattern: '^[0-9]{1,30}$' }),
  action: Type.Union([...QUALITY_RATINGS, 'pause', 'resume'].map((a) => Type.Literal(a))),
});

const AccountForm = Type.Object({
  waba_id: Type.String({ pattern: '^[0-9]{1,30}$' }),
  event: Type.Union(ACCOUNT_EVENTS.map((e) => Type.Literal(e))),
});

/** The WABAs some app holds a WhatsApp grant for. */
function grantedWabas(state: SandboxState): string[] {
  const wabas = new Set<string>();
  for (const g of state.grants.values()) for (const id of g.assetIds) wabas.add(id);
  return [...wabas].filter((w) => appsOfWaba(state, w).length > 0);
}

/** The section of the apps page. */
export function SignalsSection(p: { state: SandboxState }) {
  const wabas = grantedWabas(p.state);
  if (wabas.length === 0) return null;
  return (
    <section aria-labelledby="signals">
      <h2 id="signals">WhatsApp account signals</h2>
      <p>Change a number's or a template's standing; the apps get the provider's webhook.</p>
      {wabas.map((waba) => (
        <div key={waba}>
          <h3>WhatsApp Business Account {waba}</h3>
          <form method="post" action="/sandbox/signals/account">
            <input type="hidden" name="waba_id" value={waba} />
            <button type="submit" name="event" value="ACCOUNT_VIOLATION">
              Report a policy violation
            </button>
            <button type="submit" name="event" value="ACCOUNT_RESTRICTION">
              Restrict messaging for 24 hours
            </button>
            <button type="submit" name="event" value="DISABLED_UPDATE">
              Schedule a ban
            </button>
          </form>
          <StandingForms state={p.state} waba={waba} />
          {phoneNumberIdsOf(waba).map((id) => {
            const n = currentNumber(p.state, id);
            return (
              <div key={id}>
                <p>
                  <strong>{n.display_phone_number}</strong> ({id}): quality {n.quality_rating},{' '}
                  {n.messaging_limit_tier}
                </p>
                <form method="post" action="/sandbox/signals/number">
                  <input type="hidden" name="phone_number_id" value={id} />
                  {QUALITY_RATINGS.map((q) => (
                    <button type="submit" name="quality_rating" value={q} key={q}>
                      Quality {q}
                    </button>
                  ))}
                </form>
                <form method="post" action="/sandbox/signals/number">
                  <input type="hidden" name="phone_number_id" value={id} />
                  <label>
                    Messaging limit tier{' '}
                    <select name="messaging_limit_tier">
                      {TIERS.map((t) => (
                        <option key={t} value={t} selected={t === n.messaging_limit_tier}>
                          {t}
                        </option>
                      ))}
                    </select>
                  </label>
                  <button type="submit">Set tier</button>
                </form>
              </div>
            );
          })}
          {p.state.cloud.templatesOf(waba).map((t) => (
            <form method="post" action="/sandbox/signals/template" key={t.id}>
              <p>
                Template <strong>{t.name}</strong> ({t.language}): {t.status}, quality{' '}
                {qualityOf(t)}
              </p>
              <input type="hidden" name="waba_id" value={waba} />
              <input type="hidden" name="template_id" value={t.id} />
              {QUALITY_RATINGS.map((q) => (
                <button type="submit" name="action" value={q} key={q}>
                  Quality {q}
                </button>
              ))}
              <button
                type="submit"
                name="action"
                value={t.status === 'PAUSED' ? 'resume' : 'pause'}
              >
                {t.status === 'PAUSED' ? 'Resume' : 'Pause'}
              </button>
            </form>
          ))}
        </div>
      ))}
    </section>
  );
}

/** The account signals surface. */
export async function signalRoutes(app: FastifyInstance, { state }: SurfaceOptions): Promise<void> {
  app.post(
    '/sandbox/signals/number',
    { schema: { body: NumberForm, response: HtmlResponse } },
    async (request, reply) => {
      const form = request.body as Static<typeof NumberForm>;
      return answerSignal(
        reply,
        await changeNumber(state, form.phone_number_id, {
          quality_rating: form.quality_rating,
          messaging_limit_tier: form.messaging_limit_tier,
        }),
      );
    },
  );

  app.post(
    '/sandbox/signals/account',
    { schema: { body: AccountForm, response: HtmlResponse } },
    async (request, reply) => {
      const form = request.body as Static<typeof AccountForm>;
      return answerSignal(reply, await accountUpdate(state, form.waba_id, form.event));
    },
  );

  app.post(
    '/sandbox/signals/template',
    { schema: { body: TemplateForm, response: HtmlResponse } },
    async (request, reply) => {
      const form = request.body as Static<typeof TemplateForm>;
      const change =
        form.action === 'pause' || form.action === 'resume'
          ? { pause: form.action === 'pause' }
          : { quality: form.action as (typeof QUALITY_RATINGS)[number] };
      return answerSignal(
        reply,
        await changeTemplate(state, form.waba_id, form.template_id, change),
      );
    },
  );
}
