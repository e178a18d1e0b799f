/**
 * The `campaign` commands: `create` (from options or a JSON file), `list`, `show`, and the
 * lifecycle moves `start`, `pause`, `resume`, `cancel`. They call the same campaigns service as
 * `/messaging/campaigns`, with the same checks; every change is audited as the CLI
 * (`system:cli`) and announced as its `campaign.*` webhook. Costs are in minor units of
 * MESSAGING_CURRENCY.
 *
 * @see docs/how-to/send-a-campaign.md
 * @see docs/decisions/0067-campaign-cli.md
 * @see docs/reference/cli.md
 */
import { readFileSync } from 'node:fs';
import { InvalidArgumentError } from 'commander';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { CAMPAIGN_STATUSES } from '../db/schema/campaigns.ts';
import type { CampaignCaller } from '../messaging/campaigns/campaign-lifecycle.ts';
import {
  NewCampaignBodySchema,
  PACE_MAX,
  type Campaign,
  type NewCampaignBody,
} from '../messaging/campaigns/campaigns-schemas.ts';
import { UsageError } from '../platform/errors.ts';
import { validationDetails } from '../platform/validation-messages.ts';
import type { Services } from '../services.ts';
import { cliActor, defineCommand, integer, list, Portal, portalOption } from './command.ts';
import { amountWords } from './messaging-commands.ts';

const CampaignId = Type.String({ minLength: 1, maxLength: 64 });
const idPositional = { value: '<id>', description: 'campaign id (cmp_…)' };

/** The portal of `code`, as the campaigns service takes its caller: audited as the CLI. */
async function callerOf(services: Services, code: string): Promise<CampaignCaller> {
  return { portalId: await services.accounts.portalIdFor(code), actor: await cliActor() };
}

/** A contact field parameter: `contact:firstName` or `contact:firstName|there`. */
const CONTACT_PARAMETER = /^contact:([^|]+)(?:\|(.*))?$/s;

/**
 * One `--parameter`, appended to those before it (commander passes the previous value): a text,
 * or `contact:<field>[|<fallback>]` for a field of each recipient's contact.
 */
function parameter(value: string, previous?: unknown): unknown[] {
  const match = CONTACT_PARAMETER.exec(value);
  const item = match
    ? { contact: match[1]!, ...(match[2] !== undefined && { fallback: match[2] }) }
    : value;
  return [...(Array.isArray(previous) ? (previous as unknown[]) : []), item];
}

/** `--schedule-at`: an ISO 8601 time with its offset (`2026-12-01T09:00:00Z`), as UTC. */
function isoTime(value: string): string {
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value) || !ms)
    throw new InvalidArgumentError(
      'Give an ISO 8601 time with its offset, e.g. 2026-12-01T09:00:00Z.',
    );
  return new Date(ms).toISOString();
}

/** The option a field of the campaign's body comes from, in the CLI's words. */
const OPTION_OF: [RegExp, string][] = [
  [/^name/, '--name'],
  [/^from/, '--from'],
  [/^template\.name/, '--template'],
  [/^template\.language/, '--language'],
  [/^template\.parameters/, '--parameter'],
  [/^template/, '--template'],
  [/^audience\.tag/, '--tag'],
  [/^audience\.contactIds/, '--contacts'],
  [/^audience/, '--tag, --contacts or --all'],
  [/^schedule/, '--schedule-at'],
  [/^pace/, '--pace'],
];

/**
 * `body` checked against the API's schema, each problem named by the option it comes from (or
 * by its field in `file`).
 *
 * @throws UsageError listing the problems.
 */
function checkedBody(body: unknown, file: string | undefined): NewCampaignBody {
  if (Value.Check(NewCampaignBodySchema, body)) return body;
  const problems = validationDetails([...Value.Errors(NewCampaignBodySchema, body)], '').map(
    (d) =>
      `${file ? d.field : (OPTION_OF.find(([re]) => re.test(d.field))?.[1] ?? d.field)} ${d.message}`,
  );
  throw new UsageError(`campaign create${file ? ` (${file})` : ''}: ${problems.join('; ')}.`);
}

/** The fields options of `campaign create`, by option key. */
const FIELD_OPTIONS = [
  'name',
  'from',
  'template',
  'language',
  'parameter',
  'tag',
  'contacts',
  'all',
  'scheduleAt',
  'pace',
] as const;

/** The campaign `campaign create` asks for: read from `--file`, or made of the options. */
function bodyOf(o: Record<string, unknown>): NewCampaignBody {
  const given = FIELD_OPTIONS.filter((k) => o[k] !== undefined && o[k] !== false);
  if (o.file !== undefined) {
    if (given.length > 0)
      throw new UsageError(
        'Give either --file or the campaign options (--name, --from, …), not both.',
      );
    const file = o.file as string;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      throw new UsageError(`Cannot read ${file}.`);
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new UsageError(`${file} is not valid JSON.`);
    }
    return checkedBody(value, file);
  }
  const missing = ['name', 'from', 'template', 'language'].filter((k) => o[k] === undefined);
  if (missing.length > 0)
    throw new UsageError(
      `campaign create: give ${missing.map((k) => `--${k}`).join(', ')} (or --file).`,
    );
  const audiences = (['tag', 'contacts', 'all'] as const).filter(
    (k) => o[k] !== undefined && o[k] !== false,
  );
  if (audiences.length !== 1)
    throw new UsageError('campaign create: give exactly one audience: --tag, --contacts or --all.');
  const audience =
    o.tag !== undefined
      ? { tag: o.tag }
      : o.contacts !== undefined
        ? { contactIds: o.contacts }
        : { all: true };
  return checkedBody(
    {
      name: o.name,
      from: o.from,
      template: {
        name: o.template,
        language: o.language,
        ...(o.parameter !== undefined && { parameters: o.parameter }),
      },
      audience,
      ...(o.scheduleAt !== undefined && { schedule: { at: o.scheduleAt } }),
      ...(o.pace !== undefined && { pace: { perSecond: o.pace } }),
    },
    undefined,
  );
}

const count = (n: number, one: string, many = `${one}s`) =>
  `${n.toLocaleString('en')} ${n === 1 ? one : many}`;

/** `tag vip`, `3 contacts by id`, `every opted-in contact`. */
function audienceWords(audience: Campaign['audience']): string {
  if ('tag' in audience) return `contacts tagged ${audience.tag}`;
  if ('contactIds' in audience) return count(audience.contactIds.length, 'contact') + ' by id';
  return 'every opted-in contact';
}

const cost = (minor: number | null, currency: string | null) =>
  minor === null
    ? 'not estimated yet (on start)'
    : currency
      ? amountWords(minor, currency)
      : `${minor} minor units`;

/** A campaign in words: what it sends, where it stands, its counts and its cost. */
function campaignWords(c: Campaign): string {
  const n = c.counts;
  const skipped = Object.entries(c.skippedBy)
    .filter(([, v]) => (v ?? 0) > 0)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return [
    `${c.id}  ${c.name}  ${c.status}${c.statusReason ? ` (${c.statusReason})` : ''}`,
    `  From ${c.from}, template ${c.template.name} (${c.template.language}` +
      `${c.category ? `, ${c.category.toLowerCase()}` : ''}), to ${audienceWords(c.audience)}, ` +
      `${c.pace.perSecond} per second` +
      (c.schedule ? `, scheduled at ${c.schedule.at}` : ''),
    `  Recipients ${n.recipients}, skipped ${n.skipped}${skipped ? ` (${skipped})` : ''}`,
    `  Queued ${n.queued}, sent ${n.sent}, delivered ${n.delivered}, read ${n.read}, ` +
      `failed ${n.failed}, replied ${n.replied}, opted out ${n.optedOut}`,
    `  Cost: estimated ${cost(c.cost.estimated, c.cost.currency)}, ` +
      `spent ${cost(c.cost.spent, c.cost.currency)}`,
    ...(c.startedAt ? [`  Started ${c.startedAt}`] : []),
    ...(c.finishedAt ? [`  Finished ${c.finishedAt}`] : []),
  ].join('\n');
}

export const campaignCreate = defineCommand({
  name: 'campaign create',
  description:
    'create a draft campaign (one approved template to an audience) from options or a JSON file',
  args: Type.Object({ portal: Portal, campaign: NewCampaignBodySchema }),
  options: {
    portal: portalOption,
    name: { value: '<text>', description: 'the campaign’s name' },
    from: { value: '<phone number id>', description: 'the sender phone number id' },
    template: { value: '<name>', description: 'the approved template’s name' },
    language: { value: '<code>', description: 'the template’s language, e.g. en_US' },
    parameter: {
      value: '<value>',
      description:
        'the next body variable ({{1}}, {{2}}, … in order; repeat the option): a text, or ' +
        'contact:FIELD or contact:FIELD|FALLBACK for the field of each recipient’s contact ' +
        '(firstName, lastName, email, phone or attributes.KEY)',
      parse: parameter,
    },
    tag: { value: '<tag>', description: 'audience: every contact with this tag' },
    contacts: { value: '<ids>', description: 'audience: comma-separated contact ids', parse: list },
    all: { description: 'audience: every contact who opted in to WhatsApp' },
    scheduleAt: {
      value: '<time>',
      description: 'start at this ISO 8601 time once started (default: at once)',
      parse: isoTime,
    },
    pace: {
      value: '<per second>',
      description: `messages per second, 1-${PACE_MAX} (default 80), at most the number’s throughput`,
      parse: integer,
    },
    file: {
      value: '<path>',
      description: 'a .json file of the campaign as POST /messaging/campaigns takes it',
    },
  },
  run: async (services, a) =>
    services.campaigns.createCampaign(await callerOf(services, a.portal), a.campaign),
  send: (o, exec) => exec({ portal: String(o.portal), campaign: bodyOf(o) }),
  print: (c) => `Campaign created (draft):\n${campaignWords(c)}`,
});

export const campaignList = defineCommand({
  name: 'campaign list',
  description: 'list campaigns, newest first (one page; --cursor for the next)',
  args: Type.Object({
    portal: Portal,
    status: Type.Optional(Type.Enum(CAMPAIGN_STATUSES)),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  }),
  options: {
    portal: portalOption,
    status: { value: '<status>', description: `only this status: ${CAMPAIGN_STATUSES.join(', ')}` },
    limit: { value: '<n>', description: 'page size (1-100, default 20)', parse: integer },
    cursor: { value: '<cursor>', description: 'the next-page cursor printed by the previous page' },
  },
  run: async (services, { portal, limit, ...query }) =>
    services.campaigns.listCampaigns(await callerOf(services, portal), {
      limit: limit ?? 20,
      ...query,
    }),
  print: (page) => {
    if (page.items.length === 0) return 'No campaigns.';
    const lines = page.items.map(
      (c) =>
        `${c.id}  ${c.status}  ${c.counts.sent}/${c.counts.recipients} sent  ` +
        `${c.createdAt}  ${c.name}`,
    );
    if (page.nextCursor) lines.push(`Next page: --cursor ${page.nextCursor}`);
    return lines.join('\n');
  },
});

const IdArgs = Type.Object({ portal: Portal, id: CampaignId });
type IdArgs = Static<typeof IdArgs>;

export const campaignShow = defineCommand({
  name: 'campaign show',
  description: 'a campaign: its status, counts (sent, delivered, read, failed, …) and cost',
  args: IdArgs,
  options: { portal: portalOption },
  positionals: { id: idPositional },
  run: async (services, a) =>
    services.campaigns.getCampaign(await callerOf(services, a.portal), a.id),
  print: campaignWords,
});

export const campaignStart = defineCommand({
  name: 'campaign start',
  description:
    'start a draft: resolve its audience, price it (refused when the credit does not cover ' +
    'it) and send now or at its schedule',
  args: Type.Object({
    portal: Portal,
    id: CampaignId,
    confirmCost: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  }),
  options: {
    portal: portalOption,
    confirmCost: {
      value: '<minor units>',
      description: 'the estimate you accept: a start estimated higher is refused',
      parse: integer,
    },
  },
  positionals: { id: idPositional },
  run: async (services, a) =>
    services.campaigns.startCampaign(await callerOf(services, a.portal), a.id, a.confirmCost),
  print: (c) =>
    `${c.status === 'scheduled' ? `Scheduled for ${c.schedule?.at ?? ''}` : 'Started'}:\n` +
    campaignWords(c),
});

/** `pause`, `resume`, `cancel`: a move of the campaign given by id. */
function moveCommand(
  verb: 'pause' | 'resume' | 'cancel',
  description: string,
  done: string,
  run: (services: Services, caller: CampaignCaller, id: string) => Promise<Campaign>,
) {
  return defineCommand({
    name: `campaign ${verb}`,
    description,
    args: IdArgs,
    options: { portal: portalOption },
    positionals: { id: idPositional },
    run: async (services, a: IdArgs) => run(services, await callerOf(services, a.portal), a.id),
    print: (c: Campaign) => `${done}:\n${campaignWords(c)}`,
  });
}

export const campaignPause = moveCommand(
  'pause',
  'pause a running campaign at once (on every instance)',
  'Paused',
  (s, caller, id) => s.campaigns.pauseCampaign(caller, id),
);

export const campaignResume = moveCommand(
  'resume',
  'resume a paused campaign',
  'Resumed',
  (s, caller, id) => s.campaigns.resumeCampaign(caller, id),
);

export const campaignCancel = moveCommand(
  'cancel',
  'cancel a campaign: nothing more is sent; what is still queued fails and its credit is released',
  'Cancelled',
  (s, caller, id) => s.campaigns.cancelCampaign(caller, id),
);
