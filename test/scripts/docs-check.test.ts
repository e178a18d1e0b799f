/**
 * The docs check (scripts/docs-checker.ts) over a small tree of its own: one stale pointer of
 * each kind is reported with its file and line, and the same tree with the pointers mended
 * reports nothing.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { checkDocs } from '../../scripts/docs-checker.ts';

/** The tree every case starts from: each pointer in it resolves. */
const TREE: Record<string, string> = {
  'README.md': [
    '# Fixture',
    '',
    '## Two commands',
    '',
    'See [the guide](docs/guide.md#usage), docs/guide.md "Usage" and `src/web/page.ts`.',
    '',
  ].join('\n'),
  'docs/guide.md': [
    '# Guide',
    '',
    '## Usage',
    '',
    'Back to README.md#two-commands, as [decision 1](decisions/0001-one.md) says.',
    '',
  ].join('\n'),
  'docs/decisions.md': '# Decisions\n\n- [0001. One](decisions/0001-one.md)\n',
  'docs/decisions/0001-one.md': '# 1. One\n\n## Context\n',
  'docs/decisions/0002-two.md': '# 2. Two\n',
  'docs/generated.md': 'generated\n',
  'scripts/build.sh': '#!/bin/sh\n',
  'src/web/page.ts': [
    '/**',
    ' * The page (docs/guide.md',
    ' * "Usage"; docs/decisions/0001-one.md "Context"), built by scripts/build.sh.',
    ' *',
    ' * @see docs/guide.md "Usage"',
    ' */',
    'export const page = 1;',
    '',
  ].join('\n'),
};

/** One stale pointer per kind: where it is written, what is written, what is reported. */
const STALE: { kind: string; file: string; text: string; reported: RegExp }[] = [
  {
    kind: 'a README anchor',
    file: 'docs/guide.md',
    text: 'See README.md#what-is-where.',
    reported: /^docs\/guide\.md:7: README\.md#what-is-where: no heading with that anchor$/,
  },
  {
    kind: 'a README section quoted in a comment, over a line break',
    file: 'src/web/stale-readme.ts',
    text: '/**\n * In the documented order (README\n * "Messaging").\n */\n',
    reported: /^src\/web\/stale-readme\.ts:2: README "Messaging": no such section$/,
  },
  {
    kind: "a docs file's section quoted after its path",
    file: 'src/web/stale-section.ts',
    text: '// A retry is counted (docs/guide.md "Retries and failures").\n',
    reported:
      /^src\/web\/stale-section\.ts:1: docs\/guide\.md "Retries and failures": no such section$/,
  },
  {
    kind: 'a link to a heading that does not exist',
    file: 'README.md',
    text: 'See [usage](docs/guide.md#gone).',
    reported: /^README\.md: link docs\/guide\.md#gone: no heading with that anchor$/,
  },
  {
    kind: 'a decisions.md anchor',
    file: 'docs/guide.md',
    text: 'As decided (decisions.md#provider-callbacks).',
    reported: /^docs\/guide\.md:7: names decisions\.md, the index: name the record/,
  },
  {
    kind: 'the decisions index instead of a record',
    file: 'src/web/stale-index.ts',
    text: '// Kept for a day (docs/decisions.md).\n',
    reported: /^src\/web\/stale-index\.ts:1: names docs\/decisions\.md, the index/,
  },
  {
    kind: 'a docs file that does not exist',
    file: 'src/web/stale-doc.ts',
    text: '/** The commands: docs/cli.md. */\n',
    reported:
      /^src\/web\/stale-doc\.ts:1: names docs\/cli\.md, which is no file of the repository$/,
  },
  {
    kind: 'a source path in a comment',
    file: 'src/web/stale-source.ts',
    text: '// Read by web/inbox-data.ts.\n',
    reported:
      /^src\/web\/stale-source\.ts:1: names web\/inbox-data\.ts, which is no file or folder/,
  },
  {
    kind: 'a source path in prose',
    file: 'docs/guide.md',
    text: 'The state lives in src/partner/x.ts.',
    reported: /^docs\/guide\.md:7: names src\/partner\/x\.ts, which is no file or folder/,
  },
  {
    kind: 'a folder in prose',
    file: 'docs/guide.md',
    text: 'Its queue is in web/delivery/ now.',
    reported: /^docs\/guide\.md:7: names web\/delivery\/, which is no file or folder/,
  },
  {
    kind: 'a script that does not exist',
    file: 'docs/guide.md',
    text: 'Run scripts/deploy.sh first.',
    reported: /^docs\/guide\.md:7: names scripts\/deploy\.sh, which is no file or folder/,
  },
  {
    kind: 'a path outside the repository',
    file: 'README.md',
    text: 'The invariants are in ../shared/DESIGN.md.',
    reported: /^README\.md:7: names \.\.\/shared\/DESIGN\.md, which is outside the repository$/,
  },
  {
    kind: 'a document outside the repository, by name',
    file: 'src/web/stale-design.ts',
    text: '// Never a 500 (DESIGN invariant 15).\n',
    reported: /^src\/web\/stale-design\.ts:1: names DESIGN, a document outside the repository$/,
  },
  {
    kind: 'a decision link whose number is not its record',
    file: 'docs/guide.md',
    text: 'See [decision\n2](decisions/0001-one.md).',
    reported:
      /^docs\/guide\.md: link "decision 2" points at decisions\/0001-one\.md, another record$/,
  },
  {
    kind: 'a decision that has no record',
    file: 'src/web/stale-decision.ts',
    text: '// Paced as decision 7 says.\n',
    reported: /^src\/web\/stale-decision\.ts:1: names decision 7, which has no record$/,
  },
  {
    kind: 'an @see section that does not exist',
    file: 'src/web/stale-see.ts',
    text: '/**\n * @see docs/guide.md "Lifecycle"\n */\n',
    reported: /^src\/web\/stale-see\.ts:2: @see docs\/guide\.md "Lifecycle": no such section$/,
  },
  {
    kind: 'a backticked source file in the docs',
    file: 'docs/guide.md',
    text: 'Sent by `delivery-worker.ts`.',
    reported: /^docs\/guide\.md: names `delivery-worker\.ts`, which is no file of the repository$/,
  },
];

/** Writes `files` into a new folder and checks it, with docs/generated.md generated. */
async function check(files: Record<string, string>): Promise<string[]> {
  const root = mkdtempSync(join(tmpdir(), 'portico-docs-check-'));
  try {
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, file)), { recursive: true });
      writeFileSync(join(root, file), text);
    }
    return await checkDocs({
      root,
      files: Object.keys(files),
      generated: [{ file: 'docs/generated.md', generate: () => 'generated\n' }],
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** The tree with `text` appended to `file` (a new file when the tree has none). */
function withStale(file: string, text: string): Record<string, string> {
  const before = TREE[file];
  return { ...TREE, [file]: before === undefined ? `${text}\n` : `${before}\n${text}\n` };
}

test('the fixture tree with every pointer resolving reports nothing', async () => {
  assert.deepEqual(await check(TREE), []);
});

for (const stale of STALE) {
  test(`reports ${stale.kind}`, async () => {
    const problems = await check(withStale(stale.file, stale.text));
    assert.equal(problems.length, 1, `one problem for ${stale.kind}, got:\n${problems.join('\n')}`);
    assert.match(problems[0] ?? '', stale.reported);
  });
}

test('a generated file that differs from what its generator writes is reported', async () => {
  const problems = await check({ ...TREE, 'docs/generated.md': 'edited by hand\n' });
  assert.deepEqual(problems, [
    'docs/generated.md is not what its generator writes: run `npm run docs:generate`',
  ]);
});
