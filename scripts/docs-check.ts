/**
 * The docs check (`npm run lint:docs`, part of `npm run lint`): what the docs point at exists.
 *
 * - every relative link of README.md and docs/**\/*.md names a file of the repository, and its
 *   `#anchor`, if any, a heading of that file (GitHub's slugs, github-slugger);
 * - every `@see docs/…` in the code names a file of docs/, and the section it quotes
 *   (`@see docs/<file>.md "Title"`) or its `#anchor` a heading of that file;
 * - every source file a doc names in backticks (`send-rules.ts`) exists under src/, test/,
 *   bench/ or scripts/, and a path with a folder (`partner/oauth/state.ts`) names that very path;
 * - every pointer in prose or comments, in the docs and the code alike: a Markdown file named in
 *   text (`docs/webhooks.md`, `README.md "Two commands"`, `decisions.md#…`) exists in the
 *   repository, and the sections it quotes or its anchor are headings of that file; a source
 *   path under a folder of src/ (`messaging/delivery/delivery-worker.ts`) exists;
 * - every generated reference (scripts/references.ts) is what its generator writes now.
 *
 * Usage: node --import tsx scripts/docs-check.ts [--write]   (--write regenerates the references)
 * Exit 1 with one line per problem; 0 when everything resolves.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';
import { Lexer, type Token, type Tokens } from 'marked';
import { REFERENCES } from './references.ts';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const problems: string[] = [];

/** The files git knows (tracked or new and not ignored), repository-relative. */
function repoFiles(): string[] {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((f) => f !== '' && existsSync(join(ROOT, f)));
}

/** Every token of a Markdown document, nested ones included (links sit inside paragraphs). */
function* walk(tokens: Token[]): Generator<Token> {
  for (const token of tokens) {
    yield token;
    const nested = (token as { tokens?: Token[] }).tokens;
    if (nested) yield* walk(nested);
    if (token.type === 'list') for (const item of (token as Tokens.List).items) yield* walk([item]);
    if (token.type === 'table') {
      const table = token as Tokens.Table;
      for (const cell of [...table.header, ...table.rows.flat()]) yield* walk(cell.tokens);
    }
  }
}

const headingCache = new Map<string, { texts: Set<string>; slugs: Set<string> }>();

/** The headings of a Markdown file: their plain texts and their GitHub anchors. */
function headingsOf(file: string): { texts: Set<string>; slugs: Set<string> } {
  let found = headingCache.get(file);
  if (!found) {
    const slugger = new GithubSlugger();
    found = { texts: new Set(), slugs: new Set() };
    for (const token of walk(new Lexer().lex(readFileSync(file, 'utf8')))) {
      if (token.type !== 'heading') continue;
      const text = (token as Tokens.Heading).text.replace(/`/g, '');
      found.texts.add(text);
      found.slugs.add(slugger.slug(text));
    }
    headingCache.set(file, found);
  }
  return found;
}

function checkMarkdown(file: string, sources: Set<string>): void {
  const text = readFileSync(join(ROOT, file), 'utf8');
  for (const token of walk(new Lexer().lex(text))) {
    if (token.type === 'link' || token.type === 'image') {
      const href = (token as Tokens.Link).href;
      if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue; // https:, mailto:, …
      const [path = '', anchor] = href.split('#');
      const target = path === '' ? join(ROOT, file) : resolve(ROOT, dirname(file), path);
      if (!target.startsWith(ROOT + '/')) {
        problems.push(`${file}: link ${href} points outside the repository`);
      } else if (!existsSync(target)) {
        problems.push(`${file}: link ${href}: no such file`);
      } else if (anchor && target.endsWith('.md') && !headingsOf(target).slugs.has(anchor)) {
        problems.push(`${file}: link ${href}: no heading with that anchor`);
      }
    }
    if (token.type === 'codespan') {
      const name = (token as Tokens.Codespan).text;
      const known = name.includes('/') ? isSourcePath(name) : sources.has(basename(name));
      if (/^[\w./-]+\.tsx?$/.test(name) && !known) {
        problems.push(`${file}: names \`${name}\`, which is no file of the repository`);
      }
    }
  }
}

/** `@see docs/<file>.md`, optionally followed by `#anchor` or by quoted section titles. */
const SEE = /@see (docs\/[\w./-]+\.md)(#[\w-]+)?((?:,? *"[^"]+")*)/g;

function checkSeeTags(file: string): void {
  const text = readFileSync(join(ROOT, file), 'utf8');
  for (const match of text.matchAll(SEE)) {
    const [, path = '', anchor, titles = ''] = match;
    const target = join(ROOT, path);
    if (!existsSync(target)) {
      problems.push(`${file}: @see ${path}: no such file`);
      continue;
    }
    const headings = headingsOf(target);
    if (anchor && !headings.slugs.has(anchor.slice(1))) {
      problems.push(`${file}: @see ${path}${anchor}: no heading with that anchor`);
    }
    for (const [, title = ''] of titles.matchAll(/"([^"]+)"/g)) {
      if (!headings.texts.has(title)) {
        problems.push(`${file}: @see ${path} "${title}": no such section`);
      }
    }
  }
}

/**
 * A Markdown file named in text, with the anchor or the quoted section titles that follow it:
 * `docs/webhooks.md`, `README.md "Two commands"`, `README "What is where"`, `decisions.md#…`. A bare
 * `README` counts only with a title or an anchor (otherwise it is just the word).
 */
const POINTER =
  /(?<![\w/.:@-])((?:\.\.?\/)*(?:[\w-]+\/)*[\w-]+\.md|README(?='s "| "|#))(?:'s)?(#[\w-]+)?((?:,? *"[^"\n]+")*)/g;

/** A source path under one of src/'s folders or a top-level folder, named in text. */
const SOURCE_PATH = /(?<![\w/.:@-])((?:[\w-]+\/)+[\w.-]+\.tsx?)\b/g;

/** Whether `path` is a source file's path, whole or its tail below a folder (`inbound/x.ts`). */
function isSourcePath(path: string): boolean {
  return sources.has(path) || [...sources].some((source) => source.endsWith(`/${path}`));
}

/** Where a Markdown file named in text in `file` can be: beside it, at the root, under docs/. */
function resolvePointer(file: string, path: string): string | undefined {
  const named = path === 'README' ? 'README.md' : path;
  return [resolve(ROOT, dirname(file), named), join(ROOT, named), join(ROOT, 'docs', named)].find(
    (candidate) => candidate.startsWith(ROOT + '/') && existsSync(candidate),
  );
}

function checkPointers(file: string, topFolders: Set<string>): void {
  const text = readFileSync(join(ROOT, file), 'utf8');
  for (const match of text.matchAll(POINTER)) {
    const [whole, path = '', anchor, titles = ''] = match;
    // Markdown links are the link check's; a bare README with nothing after it is the word.
    if (file.endsWith('.md') && text.slice(0, match.index).endsWith('](')) continue;
    if (path === 'README' && !anchor && titles === '') continue;
    const target = resolvePointer(file, path);
    if (!target) {
      problems.push(`${file}: names ${path}, which is no file of the repository`);
      continue;
    }
    const headings = headingsOf(target);
    if (anchor && !headings.slugs.has(anchor.slice(1))) {
      problems.push(`${file}: ${whole.trim()}: no heading with that anchor`);
    }
    for (const [, title = ''] of titles.matchAll(/"([^"]+)"/g)) {
      if (!headings.texts.has(title)) problems.push(`${file}: ${path} "${title}": no such section`);
    }
  }
  for (const [, path = ''] of text.matchAll(SOURCE_PATH)) {
    const top = path.split('/')[0] ?? '';
    if (!topFolders.has(top) || isSourcePath(path)) continue;
    problems.push(`${file}: names ${path}, which is no file of the repository`);
  }
}

async function checkReferences(write: boolean): Promise<void> {
  for (const reference of REFERENCES) {
    const wanted = await reference.generate();
    const file = join(ROOT, reference.file);
    const current = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    if (current === wanted) continue;
    if (write) writeFileSync(file, wanted);
    else {
      problems.push(
        `${reference.file} is not what its generator writes: run \`npm run docs:generate\``,
      );
    }
  }
}

const files = repoFiles();
const sources = new Set<string>();
/** The folders a source path in text may start with: the top-level ones and src/'s. */
const topFolders = new Set(['src', 'test', 'bench', 'scripts']);
for (const f of files) {
  if (/^(src|test|bench|scripts)\/.*\.tsx?$/.test(f)) {
    sources.add(f);
    sources.add(relative('src', f));
    sources.add(basename(f));
  }
  const srcFolder = /^src\/([\w-]+)\//.exec(f)?.[1];
  if (srcFolder) topFolders.add(srcFolder);
}
await checkReferences(process.argv.includes('--write'));
for (const f of files) {
  const isDoc = /^(README\.md|docs\/.*\.md)$/.test(f);
  const isCode = /^(src|test|bench|scripts)\/.*\.(ts|tsx|mjs|cjs|js)$/.test(f);
  if (isDoc) checkMarkdown(f, sources);
  if (isCode) checkSeeTags(f);
  // This checker's own examples, and the generator whose links are checked in what it writes.
  const exempt = f === 'scripts/docs-check.ts' || f === 'scripts/references.ts';
  if ((isDoc || isCode) && !exempt) checkPointers(f, topFolders);
}
if (problems.length > 0) {
  process.stderr.write(`${problems.join('\n')}\n${problems.length} problem(s) in the docs\n`);
  process.exit(1);
}
