/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The sandbox phone: the people's side of WhatsApp, for developers and tests.
 *
 * - `GET  /sandbox/phone`        every person's number that received or sent a message: the
 *   messages (text, or template name and parameters; status), and a form to reply. A form at
 *   the top writes in first (a free-text message needs one within 24 hours). Plain HTML, no
 *   script.
 * - `POST /sandbox/phone/reply`  form `phone_number_id`, `from`, `text`, `name?` → the inbound
 *   webhook (cloud-inbound.ts) → a result page.
 * - `POST /sandbox/inbound`      JSON `{"phoneNumberId","from","text","name"?}` (`from` digits, no
 *   `+`) → 200 `{"wamid","deliveries"}` once every app answered 200; 502 with the deliveries
 *   otherwise; 404 `{"error"}` for an unknown number or one no app's grant covers.
 * - `GET  /sandbox/stats`        sends, distinct and duplicated `biz_opaque_callback_data`.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/payload-examples
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { writeIn, type InboundOutcome } from './cloud-inbound.ts';
import { describePhoneNumber, phoneNumberIdsOf, type PhoneMessage } from './cloud-state.ts';
import { appsOfWaba } from './cloud-webhooks.ts';
import { Layout, page } from './pages.tsx';
import type { SandboxState } from './sandbox-state.ts';
import { HtmlResponse, type SurfaceOptions } from './surface.ts';

const Inbound = Type.Object({
  phoneNumberId: Type.String({ pattern: '^[0-9]{1,30}$' }),
  from: Type.String({ pattern: '^[1-9][0-9]{6,14}$' }),
  text: Type.String({ minLength: 1, maxLength: 4096 }),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
});
const ReplyForm = Type.Object({
  phone_number_id: Type.String({ pattern: '^[0-9]{1,30}$' }),
  from: Type.String({ pattern: '^[1-9][0-9]{6,14}$' }),
  text: Type.String({ minLength: 1, maxLength: 4096 }),
  name: Type.Optional(Type.String({ maxLength: 100 })),
});

/** Every business number of a WABA some app was granted. */
function businessNumbers(state: SandboxState): string[] {
  const wabas = new Set<string>();
  for (const g of state.grants.values()) for (const id of g.assetIds) wabas.add(id);
  return [...wabas].filter((w) => appsOfWaba(state, w).length > 0).flatMap(phoneNumberIdsOf);
}

function describe(m: PhoneMessage): string {
  if (m.template)
    return `template ${m.template.name} (${m.template.language}) ${JSON.stringify(m.template.params)}`;
  return m.text ?? `(${m.type})`;
}

function PhonePage(p: {
  numbers: string[];
  people: [string, PhoneMessage[]][];
  /** What the last reply did (shown above the form, so the phone stays in reach). */
  outcome?: string[] | undefined;
}) {
  const options = p.numbers.map((id) => (
    <option key={id} value={id}>
      {describePhoneNumber(id).display_phone_number} ({id})
    </option>
  ));
  return (
    <Layout title="Sandbox phone">
      <h1>Sandbox phone</h1>
      {p.outcome && (
        <div class="outcome" role="status">
          {p.outcome.map((line, i) => (
            <p key={i}>{line}</p>
          ))}
        </div>
      )}
      <p>
        The messages each test number received, and its replies (they reach the app as inbound
        webhooks).
      </p>
      <h2>Write to a business</h2>
      <form method="post" action="/sandbox/phone/reply">
        <label>
          Business number <select name="phone_number_id">{options}</select>
        </label>
        <label>
          Your number (digits, with country code){' '}
          <input name="from" pattern="[1-9][0-9]{6,14}" required />
        </label>
        <label>
          Your name <input name="name" maxLength={100} />
        </label>
        <label>
          Message <input name="text" required maxLength={4096} />
        </label>
        <button type="submit">Send</button>
      </form>
      {p.people.map(([waId, messages]) => (
        <section key={waId}>
          <h2>+{waId}</h2>
          <table>
            <tbody>
              {messages.map((m) => (
                <tr key={m.wamid}>
                  <td>{new Date(m.at).toISOString()}</td>
                  <td>
                    {m.direction === 'received' ? 'from' : 'to'}{' '}
                    {describePhoneNumber(m.phoneNumberId).display_phone_number}
                  </td>
                  <td>{describe(m)}</td>
                  <td>{m.status}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <form method="post" action="/sandbox/phone/reply">
            <input type="hidden" name="from" value={waId} />
            <input type="hidden" name="phone_number_id" value={messages.at(-1)?.phoneNumberId} />
            <label>
              Reply <input name="text" required maxLength={4096} />
            </label>
            <button type="submit">Reply</button>
          </form>
        </section>
      ))}
    </Layout>
  );
}

function outcomeLines(outcome: InboundOutcome): string[] {
  if (!outcome.ok)
    return [
      outcome.reason === 'unknown_number'
        ? 'No such business number in the sandbox.'
        : 'No app holds a grant for this business number.',
    ];
  return [
    `Message ${outcome.wamid} written.`,
    ...outcome.deliveries.map((d) => `App ${d.appId} answered ${d.status}.`),
  ];
}

/** The sandbox phone surface. */
export async function sandboxPhoneRoutes(
  app: FastifyInstance,
  { state }: SurfaceOptions,
): Promise<void> {
  const phonePage = (outcome?: string[]) => {
    const people = new Map<string, PhoneMessage[]>();
    for (const m of state.cloud.messages.slice(-500))
      people.set(m.waId, [...(people.get(m.waId) ?? []), m]);
    return page(
      <PhonePage
        numbers={businessNumbers(state)}
        people={[...people.entries()]}
        outcome={outcome}
      />,
    );
  };

  app.get('/sandbox/phone', { schema: { response: HtmlResponse } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(phonePage()),
  );

  // The answer is the phone again, with what happened on top: the next reply is one field away.
  app.post(
    '/sandbox/phone/reply',
    { schema: { body: ReplyForm, response: HtmlResponse } },
    async (request, reply) => {
      const form = request.body as Static<typeof ReplyForm>;
      const outcome = await writeIn(state, {
        phoneNumberId: form.phone_number_id,
        from: form.from,
        text: form.text,
        ...(form.name && { name: form.name }),
      });
      return reply
        .code(outcome.ok ? 200 : 404)
        .type('text/html; charset=utf-8')
        .send(phonePage(outcomeLines(outcome)));
    },
  );

  app.post(
    '/sandbox/inbound',
    {
      schema: {
        body: Inbound,
        response: {
          200: Type.Record(Type.String(), Type.Unknown()),
          '4xx': Type.Record(Type.String(), Type.Unknown()),
          502: Type.Record(Type.String(), Type.Unknown()),
        },
      },
    },
    async (request, reply) => {
      const outcome = await writeIn(state, request.body as Static<typeof Inbound>);
      if (!outcome.ok) return reply.code(404).send({ error: outcome.reason });
      const acknowledged = outcome.deliveries.every((d) => d.status === 200);
      return reply
        .code(acknowledged ? 200 : 502)
        .send({ wamid: outcome.wamid, deliveries: outcome.deliveries });
    },
  );

  app.get('/sandbox/stats', async () => state.cloud.stats());
}
