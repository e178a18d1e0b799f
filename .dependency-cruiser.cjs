/**
 * The layers of src/ (docs/architecture.md), checked by `npm run lint`:
 *
 *   platform ← db ← audit, accounts, browser ← features ← web ← composition roots (and cli/)
 *
 * (config.ts sits beside platform.) A folder imports only from the floors below it and from its
 * own floor where a rule allows; nothing imports upward, and no two modules import each other.
 */
const FEATURES = '^src/(external-api|tickets|contacts|messaging|webhooks|partner)/';
const ROOTS = '^src/(main|app|services)\\.ts$|^src/cli/';

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
      name: 'kit-is-below-the-features',
      comment: 'audit/, accounts/ and browser/ serve every feature, so they import none.',
      severity: 'error',
      from: { path: '^src/(audit|accounts|browser)/' },
      to: { path: `${FEATURES}|^src/(web|cli|sandbox-provider)/|${ROOTS}` },
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
    {
      name: 'partner-imports-no-other-feature',
      comment: 'Every other feature calls the provider through partner/, never the other way.',
      severity: 'error',
      from: { path: '^src/partner/' },
      to: { path: FEATURES, pathNot: '^src/partner/' },
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
