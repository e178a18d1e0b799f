/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The rest of the account's standing on the sandbox's apps page (under the account signals),
 * each change sent to the apps as the provider's webhook (cloud-standing.ts):
 *
 * - `POST /sandbox/signals/template-category` form `waba_id`, `template_id`, `category`
 *   (MARKETING, UTILITY, AUTHENTICATION), `impending` (`yes`: announced a day ahead).
 * - `POST /sandbox/signals/user-preferences` form `phone_number_id`, `wa_id` (digits), `value`
 *   (stop, resume).
 * - `POST /sandbox/signals/alert` form `waba_id`, `alert_type`.
 * - `POST /sandbox/signals/capability` form `waba_id`, `tier` (TIER_250 … TIER_UNLIMITED).
 * - `POST /sandbox/signals/name` form `phone_number_id`, `decision` (APPROVED, DEFERRED,
 *   REJECTED).
 * - `POST /sandbox/signals/user-id` form `phone_number_id`, `previous_user_id` (a BSUID),
 *   `user_id` (the new BSUID; blank: one derived from the previous): the person's BSUID changes
 *   (cloud-user-ids.ts).
 *
 * Each answers a result page; unknown numbers, templates or WABAs → 404, bad input → 400.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/template_category_update
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type, type Static, type TSchema } from 'typebox';
import { phoneNumberIdsOf } from './cloud-state.ts';
import { TIERS, type SignalOutcome } from './cloud-signals.ts';
import {
  accountAlert,
  ALERTS,
  businessCapability,
  CATEGORIES,
  changeTemplateCategory,
  NAME_DECISIONS,
  phoneNumberName,
  userPreference,
  type AlertType,
} from './cloud-standing.ts';
import { changeUserId } from './cloud-user-ids.ts';
import { page, ResultPage } from './pages.tsx';
import { BSUID_PATTERN } from './sandbox-people.ts';
import type { SandboxState } from './sandbox-state.ts';
import { HtmlResponse, type SurfaceOptions } from './surface.ts';

const Digits = Type.String({ pattern: '^[0-9]{1,30}$' });
const Literals = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)));
const CategoryForm = Type.Object({
  waba_id: Digits,
  template_id: Digits,
  category: Literals(CATEGORIES),
  impending: Type.Optional(Type.Literal('yes')),
});
const PreferenceForm = Type.Object({
  phone_number_id: Digits,
  wa_id: Type.String({ pattern: '^[0-9]{6,20}$' }),
  value: Literals(['stop', 'resume']),
});
const UserIdForm = Type.Object({
  phone_number_id: Digits,
  previous_user_id: Type.String({ pattern: BSUID_PATTERN }),
  user_id: Type.Optional(Type.Union([Type.Literal(''), Type.String({ pattern: BSUID_PATTERN })])),
});
const AlertForm = Type.Object({ waba_id: Digits, alert_type: Literals(Object.keys(ALERTS)) });
const CapabilityForm = Type.Object({ waba_id: Digits, tier: Literals(TIERS) });
const NameForm = Type.Object({ phone_number_id: Digits, decision: Literals(NAME_DECISIONS) });

/** A result page for a signal (the apps page's forms). */
export function answerSignal(reply: FastifyReply, outcome: SignalOutcome) {
  reply.type('text/html; charset=utf-8');
  if (!outcome.ok)
    return reply
      .code(outcome.reason.startsWith('unknown') ? 404 : 400)
      .send(
        page(<ResultPage title="Nothing changed" lines={[outcome.reason.replace('_', ' ')]} />),
      );
  const lines =
    outcome.deliveries.length === 0
      ? ['It was already so: no webhook sent.']
      : outcome.deliveries.map((d) => `App ${d.appId} answered ${d.status}.`);
  return reply.send(page(<ResultPage title="Signal sent" lines={lines} />));
}

/** A form that posts the WABA and one value chosen from a list. */
function WabaChoiceForm(p: {
  action: string;
  waba: string;
  label: string;
  name: string;
  choices: readonly string[];
  submit: string;
}) {
  return (
    <form method="post" action={p.action}>
      <input type="hidden" name="waba_id" value={p.waba} />
      <label>
        {p.label}{' '}
        <select name={p.name}>
          {p.choices.map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      </label>
      <button type="submit">{p.submit}</button>
    </form>
  );
}

/** The WABA's part of the apps page: its standing's buttons. */
export function StandingForms(p: { state: SandboxState; waba: string }) {
  const { waba } = p;
  const [first] = phoneNumberIdsOf(waba);
  return (
    <div>
      <WabaChoiceForm
        action="/sandbox/signals/alert"
        waba={waba}
        label="Alert"
        name="alert_type"
        choices={Object.keys(ALERTS)}
        submit="Raise alert"
      />
      <WabaChoiceForm
        action="/sandbox/signals/capability"
        waba={waba}
        label="Portfolio messaging limit"
        name="tier"
        choices={TIERS}
        submit="Set limit"
      />
      <form method="post" action="/sandbox/signals/user-preferences">
        <input type="hidden" name="phone_number_id" value={first} />
        <label>
          Person (digits) <input name="wa_id" inputMode="numeric" required />
        </label>
        <button type="submit" name="value" value="stop">
          Stop marketing
        </button>
        <button type="submit" name="value" value="resume">
          Resume marketing
        </button>
      </form>
      <form method="post" action="/sandbox/signals/user-id">
        <input type="hidden" name="phone_number_id" value={first} />
        <label>
          Person&apos;s user ID <input name="previous_user_id" required />
        </label>
        <label>
          New user ID (blank: a new one) <input name="user_id" />
        </label>
        <button type="submit">Change user ID</button>
      </form>
      <form method="post" action="/sandbox/signals/name">
        <input type="hidden" name="phone_number_id" value={first} />
        {NAME_DECISIONS.map((d) => (
          <button type="submit" name="decision" value={d} key={d}>
            Display name {d.toLowerCase()}
          </button>
        ))}
      </form>
      {p.state.cloud.templatesOf(waba).map((t) => (
        <form method="post" action="/sandbox/signals/template-category" key={t.id}>
          <input type="hidden" name="waba_id" value={waba} />
          <input type="hidden" name="template_id" value={t.id} />
          <label>
            {t.name} ({t.category}) to{' '}
            <select name="category">
              {CATEGORIES.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </select>
          </label>
          <label>
            <input type="checkbox" name="impending" value="yes" /> a day ahead
          </label>
          <button type="submit">Change category</button>
        </form>
      ))}
    </div>
  );
}

/** The standing surface. */
export async function standingRoutes(
  app: FastifyInstance,
  { state }: SurfaceOptions,
): Promise<void> {
  const post = <S extends TSchema>(
    url: string,
    body: S,
    run: (form: Static<S>) => Promise<SignalOutcome>,
  ) =>
    app.post(url, { schema: { body, response: HtmlResponse } }, async (request, reply) =>
      answerSignal(reply, await run(request.body as Static<S>)),
    );
  post('/sandbox/signals/template-category', CategoryForm, (f) =>
    changeTemplateCategory(state, f.waba_id, f.template_id, {
      category: f.category,
      impending: f.impending === 'yes',
    }),
  );
  post('/sandbox/signals/user-preferences', PreferenceForm, (f) =>
    userPreference(state, f.phone_number_id, f.wa_id, f.value as 'stop' | 'resume'),
  );
  post('/sandbox/signals/user-id', UserIdForm, (f) =>
    changeUserId(state, f.phone_number_id, f.previous_user_id, f.user_id || undefined),
  );
  post('/sandbox/signals/alert', AlertForm, (f) =>
    accountAlert(state, f.waba_id, f.alert_type as AlertType),
  );
  post('/sandbox/signals/capability', CapabilityForm, (f) =>
    businessCapability(state, f.waba_id, f.tier),
  );
  post('/sandbox/signals/name', NameForm, (f) =>
    phoneNumberName(state, f.phone_number_id, f.decision as (typeof NAME_DECISIONS)[number]),
  );
}
