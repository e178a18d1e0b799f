/**
 * The layers of src/ (docs/architecture.md), checked by `npm run lint`:
 *
 *   platform ← db ← jobs, idempotency ← features ← web ← composition roots (and cli/)
 *   platform ← db ← audit, accounts, browser ← api-kit ← features
 *
 * (config.ts sits beside platform.) A folder imports only from the floors below it and from its
 * own floor where a rule allows; nothing imports upward, and no two modules import each other.
 */
const FEATURE_NAMES = ['external-api', 'tickets', 'contacts', 'messaging', 'webhooks', 'partner'];
const FEATURES = `^src/(${FEATURE_NAMES.join('|')})/`;

/**
 * The only imports from one feature into another, each with its reason. Any other sideways
 * import between features fails `npm run lint:imports`: name the edge here (and in
 * docs/architecture.md) or move the shared code down a floor.
 */
const FEATURE_EDGES = {
  'external-api': [],
  tickets: [],
  contacts: [],
  messaging: [
    {
      to: 'partner',
      why: 'the provider: every call goes through partner/ (withProvider, the Cloud API types), and messaging adds steps to its revocation and reads its webhook events',
    },
    {
      to: 'contacts',
      why: 'recipients: phone normalisation, the contact of a number (consent, service window) and the step messaging adds to an erasure; the modules are named in messaging-uses-contacts-through-named-modules',
    },
  ],
  webhooks: [
    {
      to: 'partner',
      why: "a connection's revocation reasons, which the connection.revoked event reports",
    },
    {
      to: 'messaging',
      why: "the inbound message's API schema (inbound-schemas.ts), which message.received and message.reaction carry",
    },
  ],
  partner: [],
};
/**
 * The inner floors of messaging/, lowest first. A folder imports only from itself and from the
 * folders before it; an import against this order fails `npm run lint:imports`, so no two
 * folders of messaging import each other (docs/architecture.md "Messaging",
 * docs/decisions/0052-messaging-inner-walls.md).
 */
const MESSAGING_ORDER = [
  {
    folder: 'provider',
    why: "the adapter over partner/'s Cloud API and its errors: no message in it",
  },
  { folder: 'templates', why: "the provider's templates and the template components of a send" },
  { folder: 'numbers', why: "the account's sender numbers, a route over the provider" },
  { folder: 'credit', why: 'the ledger of a portal: it knows amounts, never a message' },
  {
    folder: 'store',
    why: 'the one message: its rows, content, view, schemas, daily counts and the service window',
  },
  {
    folder: 'events',
    why: "messaging's domain events: their names and payloads, over the store's shapes",
  },
  { folder: 'media', why: 'media of both directions: bytes, kinds, uploads, over the store' },
  { folder: 'inbound', why: "a person's messages stored, announced as events" },
  {
    folder: 'provider-webhooks',
    why: "the provider's statuses and account signals applied to the store, announced as events",
  },
  { folder: 'outbound', why: 'the send path: checks, the row, credit, the delivery queue' },
  { folder: 'drafts', why: 'drafts, sent through a port of the send path given at composition' },
  {
    folder: 'campaigns',
    why: "broadcasts: the audience's snapshot and the runner, sent through a port of the send path",
  },
  {
    folder: 'conversations',
    why: 'the read model of both directions, keywords (consent), retention and the sweep',
  },
  { folder: 'service', why: "the feature's composition: the service, its routes, erasure" },
];
const MESSAGING_FOLDERS = MESSAGING_ORDER.map((f) => f.folder);
const ROOTS = '^src/(main|app|services|background-tasks)\\.ts$|^src/cli/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Two modules that import each other (through any path) are one concern split badly.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'platform-is-the-ground-floor',
      severity: 'error',
      from: { path: '^src/platform/' },
      to: { path: '^src/', pathNot: '^src/platform/' },
    },
    {
      name: 'config-sits-beside-platform',
      severity: 'error',
      from: { path: '^src/config[^/]*\\.ts$' },
      to: { path: '^src/', pathNot: '^src/(platform/|config[^/]*\\.ts$)' },
    },
    {
      name: 'db-is-below-the-features',
      severity: 'error',
      from: { path: '^src/db/' },
      to: { path: '^src/', pathNot: '^src/(db|platform)/' },
    },
    {
      name: 'jobs-is-below-the-features',
      comment: 'The one job queue (pg-boss) serves every feature, so it imports none.',
      severity: 'error',
      from: { path: '^src/jobs/' },
      to: { path: '^src/', pathNot: '^src/(jobs|db|platform)/|^src/config[^/]*\\.ts$' },
    },
    {
      name: 'kit-is-below-the-features',
      comment: 'audit/, accounts/ and browser/ serve every feature, so they import none.',
      severity: 'error',
      from: { path: '^src/(audit|accounts|browser)/' },
      to: { path: `${FEATURES}|^src/(web|cli|sandbox-provider)/|${ROOTS}` },
    },
    {
      name: 'api-kit-is-below-the-features',
      comment:
        'api-kit/ (the schema kit, the principal of a request, the API cursor) is the floor every ' +
        'API route stands on: it imports the kit below it, never a feature or a page.',
      severity: 'error',
      from: { path: '^src/api-kit/' },
      to: { path: `${FEATURES}|^src/(web|cli|sandbox-provider|idempotency|jobs)/|${ROOTS}` },
    },
    {
      name: 'the-kit-stands-below-the-api-kit',
      severity: 'error',
      from: { path: '^src/(audit|accounts|browser|idempotency|jobs|db|platform)/' },
      to: { path: '^src/api-kit/' },
    },
    {
      name: 'kit-floor-order',
      comment: 'accounts/ may record audit events; audit/ and browser/ import neither.',
      severity: 'error',
      from: { path: '^src/(audit|browser)/' },
      to: { path: '^src/(accounts|audit|browser)/', pathNot: '$1' },
    },
    {
      name: 'features-are-below-the-pages',
      severity: 'error',
      from: { path: FEATURES },
      to: { path: `^src/(web|cli|sandbox-provider)/|${ROOTS}` },
    },
    ...FEATURE_NAMES.map((feature) => ({
      name: `${feature}-imports-features-only-by-named-edges`,
      comment: `Allowed: ${
        FEATURE_EDGES[feature].map((e) => `${feature} → ${e.to} (${e.why})`).join('; ') || 'none'
      }. See FEATURE_EDGES.`,
      severity: 'error',
      from: { path: `^src/${feature}/` },
      to: {
        path: FEATURES,
        pathNot: `^src/(${[feature, ...FEATURE_EDGES[feature].map((e) => e.to)].join('|')})/`,
      },
    })),
    {
      name: 'messaging-files-live-in-a-declared-folder',
      comment: 'Every file of messaging/ sits in one of MESSAGING_ORDER, so its floor is known.',
      severity: 'error',
      from: {
        path: '^src/messaging/',
        pathNot: `^src/messaging/(${MESSAGING_FOLDERS.join('|')})/`,
      },
      to: { path: '.' },
    },
    ...MESSAGING_ORDER.slice(0, -1).map(({ folder, why }, i) => ({
      name: `messaging-${folder}-imports-only-lower-folders`,
      comment: `messaging/${folder}/ (${why}) imports only ${
        MESSAGING_FOLDERS.slice(0, i).join(', ') || 'no other folder of messaging'
      }: it stands below ${MESSAGING_FOLDERS.slice(i + 1).join(', ')}. See MESSAGING_ORDER.`,
      severity: 'error',
      from: { path: `^src/messaging/${folder}/` },
      to: { path: `^src/messaging/(${MESSAGING_FOLDERS.slice(i + 1).join('|')})/` },
    })),
    {
      name: 'idempotency-is-below-the-features',
      comment:
        'The Idempotency-Key claim, replay and queries serve every feature that creates something.',
      severity: 'error',
      from: { path: '^src/idempotency/' },
      to: { path: '^src/', pathNot: '^src/(idempotency|db|platform)/' },
    },
    {
      name: 'messaging-uses-contacts-through-named-modules',
      comment:
        'A named sideways edge, to these modules only. Reads: the recipient of a send ' +
        '(contacts-repository.ts), phone normalisation (phone.ts), a business-scoped user id ' +
        '(wa-user-id.ts), a new contact id (contact-id.ts), whether a person stopped marketing ' +
        "(marketing-preferences.ts), the erasure step's type (contacts-service.ts). Writes, each " +
        "in messaging's transaction: a keyword's consent change (consent-steps.ts), the " +
        "provider's marketing preference (marketing-preferences.ts).",
      severity: 'error',
      from: { path: '^src/messaging/' },
      to: {
        path: '^src/contacts/',
        pathNot:
          '^src/contacts/(contacts-repository|phone|wa-user-id|contact-id|marketing-preferences|contacts-service|consent-steps)\\.ts$',
      },
    },
    {
      name: 'web-is-below-the-roots',
      severity: 'error',
      from: { path: '^src/web/' },
      to: { path: `^src/sandbox-provider/|${ROOTS}` },
    },
    {
      name: 'only-the-roots-import-services',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(main|app)\\.ts$|^src/cli/' },
      to: { path: '^src/services\\.ts$' },
    },
    {
      name: 'the-sandbox-stands-apart',
      comment: 'The provider emulator knows the wire format, not our code.',
      severity: 'error',
      from: { path: '^src/sandbox-provider/' },
      to: { path: '^src/', pathNot: '^src/(sandbox-provider|platform)/|^src/config[^/]*\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
