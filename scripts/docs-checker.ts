/**
 * What the docs check (`npm run lint:docs`, scripts/docs-check.ts) verifies, as one call over a
 * tree of files: what the docs and the code point at exists.
 *
 * - every relative link of README.md and docs/**\/*.md names a file of the repository, and its
 *   `#anchor`, if any, a heading of that file (GitHub's slugs, github-slugger);
 * - every `@see docs/…` in the code names a file of docs/, and the section it quotes
 *   (`@see docs/<file>.md "Title"`) or its `#anchor` a heading of that file;
 * - every source file a doc names in backticks (`send-rules.ts`) exists under src/, test/,
 *   bench/ or scripts/, and a path with a folder (`partner/oauth/state.ts`) names that very path;
 * - every pointer in prose or comments, in the docs and the code alike, a comment read across its
 *   line breaks: a Markdown file named in text (`docs/webhooks.md`, `README.md "Two commands"`,
 *   `README.md#development`) exists in the repository, and the sections it quotes or its anchor
 *   are headings of that file; `decisions.md` is the index, so a pointer names the record
 *   (`docs/decisions/0016-messaging.md`) instead; a path whose first folder is one of the
 *   repository's (`messaging/outbound/delivery-worker.ts`, `web/inbox-data.ts`,
 *   `scripts/build.sh`, `messaging/inbound/`) exists;
 * - nothing points outside the repository: no `../` path that leaves it, no `DESIGN` document;
 * - every generated reference is what its generator writes now.
 *
 * `checkDocs` returns one line per problem (`file:line: what`), empty when everything resolves.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import GithubSlugger from 'github-slugger';
import { Lexer, type Token, type Tokens } from 'marked';

/** A file written by a generator (scripts/references.ts): checked to be what it writes now. */
export interface GeneratedFile {
  /** Repository-relative path. */
  file: string;
  generate: () => string | Promise<string>;
}

export interface DocsCheckOptions {
  /** The repository's root, absolute. */
  root: string;
  /** The files to check and to resolve against, repository-relative (git's list). */
  files: readonly string[];
  /** The generated files, compared with what their generators write. */
  generated?: readonly GeneratedFile[];
  /** Rewrite a generated file that differs instead of reporting it. */
  write?: boolean;
  /** Files whose text pointers are examples, not pointers (the checker's own). */
  examples?: ReadonlySet<string>;
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

/** `@see docs/<file>.md`, optionally followed by `#anchor` or by quoted section titles. */
const SEE = /@see (docs\/[\w./-]+\.md)(#[\w-]+)?((?:,?\s*"[^"]{1,200}")*)/g;

/**
 * A Markdown file named in text, with the anchor or the quoted section titles that follow it:
 * `docs/webhooks.md`, `README.md "Two commands"`, `README "What is where"`, `decisions.md#…`. A bare
 * `README` counts only with a title or an anchor (otherwise it is just the word).
 */
const POINTER =
  /(?<![\w/.:@-])((?:\.\.?\/)*(?:[\w-]+\/)*[\w-]+\.md|README(?='s "|\s+"|#))(?:'s)?(#[\w-]+)?((?:,?\s*"[^"]{1,200}")*)/g;

/** A path under a folder, named in text: a file with one of these extensions, or a folder. */
const PATH =
  /(?<![\w/.:@$*{-])((?:[\w-]+\/)+(?:[\w.-]+\.(?:tsx?|mjs|cjs|js|json|sh|sql|ya?ml|svg)\b|(?=[\s`'),;:]|$)))/g;

/** A path that climbs out of the folder it is written in. */
const PARENT_PATH = /(?<![\w/.:@-])((?:\.\.\/)+(?:[\w.-]+\/)*[\w.-]*\w)(?![\w/-])/g;

/** A decision record named by its number in text: `decision 26`. */
const DECISION = /\b[Dd]ecision\s+(\d+)\b/g;

/** Documents that live outside the repository, named by their bare name. */
const OUTSIDE = /(?<![\w/.-])DESIGN\b(?!\.md)/g;

/** The quoted titles of a pointer (`"A", "B"`), with line breaks read as spaces. */
function titlesOf(titles: string): string[] {
  return [...titles.matchAll(/"([^"]+)"/g)].map(([, t = '']) => t.replace(/\s+/g, ' ').trim());
}

/**
 * The text as prose: a comment's line breaks and their leaders (` * `, `// `), and a paragraph's
 * single line breaks, read as spaces, so that a pointer wrapped over two lines is one. Offsets
 * are kept (each character replaced by a space), so a match's line is the original's.
 */
function asProse(file: string, text: string): string {
  const spaces = (s: string) => s.replace(/[^\n]/g, ' ').replace(/\n/g, ' ');
  if (file.endsWith('.md')) return text.replace(/\n(?![ \t]*\n)[ \t]*/g, spaces);
  return text.replace(/\n[ \t]*(?:\*(?!\/)|\/\/)[ \t]?/g, spaces);
}

export async function checkDocs(options: DocsCheckOptions): Promise<string[]> {
  const { root, files } = options;
  const problems: string[] = [];
  const sources = new Set<string>();
  const folders = new Set<string>();
  /** The folders a path in text may start with: the repository's top-level ones and src/'s. */
  const topFolders = new Set<string>();
  for (const f of files) {
    const parts = f.split('/');
    for (let i = 1; i < parts.length; i++) folders.add(`${parts.slice(0, i).join('/')}/`);
    if (parts.length > 1) topFolders.add(parts[0] ?? '');
    if (parts[0] === 'src' && parts.length > 2) topFolders.add(parts[1] ?? '');
    if (/^(src|test|bench|scripts)\/.*\.tsx?$/.test(f)) {
      sources.add(f);
      sources.add(relative('src', f));
      sources.add(basename(f));
    }
  }
  const fileSet = new Set(files);
  const isFile = (path: string) => fileSet.has(path);

  /** Whether `path` is a file or folder of the repository, whole or below src/. */
  function exists(path: string): boolean {
    if (path.endsWith('/')) return folders.has(path) || folders.has(`src/${path}`);
    return isFile(path) || isFile(`src/${path}`);
  }

  /** Whether `path` is a source file's path, whole or its tail below a folder (`inbound/x.ts`). */
  function isSourcePath(path: string): boolean {
    return sources.has(path) || [...sources].some((source) => source.endsWith(`/${path}`));
  }

  const headingCache = new Map<string, { texts: Set<string>; slugs: Set<string> }>();

  /** The headings of a Markdown file (repository-relative): plain texts and GitHub anchors. */
  function headingsOf(file: string): { texts: Set<string>; slugs: Set<string> } {
    let found = headingCache.get(file);
    if (!found) {
      const slugger = new GithubSlugger();
      found = { texts: new Set(), slugs: new Set() };
      for (const token of walk(new Lexer().lex(readFileSync(join(root, file), 'utf8')))) {
        if (token.type !== 'heading') continue;
        const text = (token as Tokens.Heading).text.replace(/`/g, '');
        found.texts.add(text);
        found.slugs.add(slugger.slug(text));
      }
      headingCache.set(file, found);
    }
    return found;
  }

  /** Where `file` (repository-relative) names `path`: `file:line`. */
  function at(file: string, text: string, index: number): string {
    return `${file}:${text.slice(0, index).split('\n').length}`;
  }

  /** The repository-relative path `path` names from `file`, or undefined outside the root. */
  function inRepo(file: string, path: string): string | undefined {
    const target = relative(root, resolve(root, dirname(file), path));
    return target.startsWith('..') || target === '' ? undefined : target;
  }

  function checkMarkdown(file: string, text: string): void {
    for (const token of walk(new Lexer().lex(text))) {
      if (token.type === 'link' || token.type === 'image') {
        const href = (token as Tokens.Link).href;
        if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue; // https:, mailto:, …
        const [path = '', anchor] = href.split('#');
        const target = path === '' ? file : inRepo(file, path);
        if (target === undefined) {
          problems.push(`${file}: link ${href} points outside the repository`);
        } else if (!isFile(target) && !folders.has(`${target}/`)) {
          problems.push(`${file}: link ${href}: no such file`);
        } else if (anchor && target.endsWith('.md') && !headingsOf(target).slugs.has(anchor)) {
          problems.push(`${file}: link ${href}: no heading with that anchor`);
        }
        const label = /^decision\s+(\d+)$/i.exec((token as Tokens.Link).text.trim())?.[1];
        if (label && target && !basename(target).startsWith(`${label.padStart(4, '0')}-`)) {
          problems.push(`${file}: link "decision ${label}" points at ${href}, another record`);
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

  function checkSeeTags(file: string, text: string, prose: string): void {
    for (const match of prose.matchAll(SEE)) {
      const [, path = '', anchor, titles = ''] = match;
      const where = at(file, text, match.index);
      if (!isFile(path)) {
        problems.push(`${where}: @see ${path}: no such file`);
        continue;
      }
      const headings = headingsOf(path);
      if (anchor && !headings.slugs.has(anchor.slice(1))) {
        problems.push(`${where}: @see ${path}${anchor}: no heading with that anchor`);
      }
      for (const title of titlesOf(titles)) {
        if (!headings.texts.has(title)) {
          problems.push(`${where}: @see ${path} "${title}": no such section`);
        }
      }
    }
  }

  /** Where a Markdown file named in text in `file` can be: beside it, at the root, under docs/. */
  function resolvePointer(file: string, path: string): string | undefined {
    const named = path === 'README' ? 'README.md' : path;
    return [inRepo(file, named), named, join('docs', named)].find(
      (candidate) => candidate !== undefined && isFile(candidate),
    );
  }

  function checkPointers(file: string, text: string, prose: string): void {
    for (const match of prose.matchAll(POINTER)) {
      const [whole, path = '', anchor, titles = ''] = match;
      const where = at(file, text, match.index);
      // Markdown links are the link check's; a bare README with nothing after it is the word.
      if (file.endsWith('.md') && text.slice(0, match.index).endsWith('](')) continue;
      if (prose.slice(0, match.index).endsWith('@see ')) continue; // the @see check's
      if (path === 'README' && !anchor && titles === '') continue;
      if (path.startsWith('../') && inRepo(file, path) === undefined) {
        problems.push(`${where}: names ${path}, which is outside the repository`);
        continue;
      }
      const target = resolvePointer(file, path);
      if (!target) {
        problems.push(`${where}: names ${path}, which is no file of the repository`);
        continue;
      }
      if (target === 'docs/decisions.md') {
        problems.push(`${where}: names ${path}, the index: name the record (docs/decisions/…)`);
        continue;
      }
      const headings = headingsOf(target);
      if (anchor && !headings.slugs.has(anchor.slice(1))) {
        problems.push(
          `${where}: ${whole.replace(/\s+/g, ' ').trim()}: no heading with that anchor`,
        );
      }
      for (const title of titlesOf(titles)) {
        if (!headings.texts.has(title))
          problems.push(`${where}: ${path} "${title}": no such section`);
      }
    }
    for (const match of prose.matchAll(PATH)) {
      const [, path = ''] = match;
      if (!topFolders.has(path.split('/')[0] ?? '')) continue;
      const known = path.endsWith('/') ? exists(path) : exists(path) || isSourcePath(path);
      if (!known) {
        problems.push(
          `${at(file, text, match.index)}: names ${path}, which is no file or folder of the repository`,
        );
      }
    }
    for (const match of prose.matchAll(PARENT_PATH)) {
      const [, path = ''] = match;
      if (path.endsWith('.md') || inRepo(file, path) !== undefined) continue; // .md: POINTER's
      problems.push(
        `${at(file, text, match.index)}: names ${path}, which is outside the repository`,
      );
    }
    for (const match of prose.matchAll(DECISION)) {
      const number = (match[1] ?? '').padStart(4, '0');
      if (files.some((f) => f.startsWith(`docs/decisions/${number}-`))) continue;
      problems.push(
        `${at(file, text, match.index)}: names decision ${match[1]}, which has no record`,
      );
    }
    for (const match of prose.matchAll(OUTSIDE)) {
      problems.push(
        `${at(file, text, match.index)}: names DESIGN, a document outside the repository`,
      );
    }
  }

  for (const reference of options.generated ?? []) {
    const wanted = await reference.generate();
    const path = join(root, reference.file);
    const current = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
    if (current === wanted) continue;
    if (options.write) writeFileSync(path, wanted);
    else {
      problems.push(
        `${reference.file} is not what its generator writes: run \`npm run docs:generate\``,
      );
    }
  }
  for (const f of files) {
    const isDoc = /^(README\.md|docs\/.*\.md)$/.test(f);
    const isCode = /^(src|test|bench|scripts)\/.*\.(ts|tsx|mjs|cjs|js)$/.test(f);
    if (!isDoc && !isCode) continue;
    if (!statSync(join(root, f)).isFile()) continue;
    const text = readFileSync(join(root, f), 'utf8');
    const prose = asProse(f, text);
    if (isDoc) checkMarkdown(f, text);
    if (options.examples?.has(f)) continue;
    if (isCode) checkSeeTags(f, text, prose);
    checkPointers(f, text, prose);
  }
  return problems;
}
