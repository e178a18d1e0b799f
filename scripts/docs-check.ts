/**
 * The docs check (`npm run lint:docs`, part of `npm run lint`): what the docs point at exists.
 *
 * - every relative link of README.md and docs/**\/*.md names a file of the repository, and its
 *   `#anchor`, if any, a heading of that file (GitHub's slugs, github-slugger);
 * - every `@see docs/…` in the code names a file of docs/, and the section it quotes
 *   (`@see docs/<file>.md "Title"`) or its `#anchor` a heading of that file;
 * - every source file a doc names in backticks (`send-rules.ts`) exists under src/, test/,
 *   bench/ or scripts/;
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
      if (/^[\w./-]+\.tsx?$/.test(name) && !sources.has(name) && !sources.has(basename(name))) {
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
for (const f of files) {
  if (/^(src|test|bench|scripts)\/.*\.tsx?$/.test(f)) {
    sources.add(f);
    sources.add(relative('src', f));
    sources.add(basename(f));
  }
}
await checkReferences(process.argv.includes('--write'));
for (const f of files) {
  if (/^(README\.md|docs\/.*\.md)$/.test(f)) checkMarkdown(f, sources);
  if (/^(src|test|bench|scripts)\/.*\.(ts|tsx|mjs|cjs|js)$/.test(f)) checkSeeTags(f);
}
if (problems.length > 0) {
  process.stderr.write(`${problems.join('\n')}\n${problems.length} problem(s) in the docs\n`);
  process.exit(1);
}
