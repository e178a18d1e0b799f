/**
 * The README's walk ("The main job, command by command") is run by people at the repository
 * root: every file it writes must go to its temporary directory `$WALK`, never into the
 * repository, and the walk must show the agents and their console. Read from README.md itself,
 * so a step added later that writes elsewhere fails here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers/root.ts';

/** The walk's section of README.md: from its heading to the next second-level heading. */
function walkSection(readme: string): string {
  const start = readme.indexOf('## The main job, command by command');
  assert.ok(start >= 0, 'README.md has no section "The main job, command by command"');
  const end = readme.indexOf('\n## ', start + 3);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** The `sh` blocks' commands, continuation lines joined, comment lines dropped. */
function commands(section: string): string[] {
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks
    .flatMap((block) => block.replace(/\\\n/g, ' ').split('\n'))
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/**
 * Shell words and operators of one command line: quotes kept as written inside a word
 * (`"$WALK/a.pdf"` stays quoted, so a word's start tells where it points), `$(…)` kept whole,
 * `|`, `;`, `&&`, `>` and `>>` as words of their own.
 */
function words(line: string): string[] {
  const out: string[] = [];
  let word = '';
  let depth = 0; // inside $( … )
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'" || c === '"') {
      const close = line.indexOf(c, i + 1);
      assert.ok(close > i, `unclosed ${c} in: ${line}`);
      word += line.slice(i, close + 1);
      i = close;
    } else if (c === '$' && line[i + 1] === '(') {
      depth++;
      word += '$(';
      i++;
    } else if (c === ')' && depth > 0) {
      depth--;
      word += c;
    } else if (depth > 0) {
      word += c;
    } else if (c === ' ' || c === '|' || c === ';' || c === '>' || c === '&') {
      if (word) out.push(word);
      word = '';
      if (c === '>') out.push(line[i + 1] === '>' ? (i++, '>>') : '>');
      else if (c !== ' ') out.push(c);
    } else {
      word += c;
    }
  }
  if (word) out.push(word);
  return out;
}

/** The paths one command line writes: redirections, `curl -o`, `cp`'s target, `node -e` writes. */
function writtenPaths(line: string): string[] {
  const w = words(line);
  const paths: string[] = [];
  for (let i = 0; i < w.length; i++) {
    const word = w[i]!;
    if ((word === '>' || word === '>>') && w[i + 1] !== undefined) paths.push(w[i + 1]!);
    if ((word === '-o' || word === '--output') && w[i - 1] !== undefined) paths.push(w[i + 1]!);
    if (word === 'cp' || word === 'mv') paths.push(w[i + 2]!);
    if (word === 'tee' || word === 'touch' || word === 'mkdir') paths.push(w[i + 1]!);
    // node -e '…writeFileSync(process.argv[1], …)…' <file>: the script writes its argument.
    if ((word === '-e' || word === '-p') && /writeFileSync\(process\.argv\[1\]/.test(w[i + 1]!))
      paths.push(w[i + 2]!);
    else if ((word === '-e' || word === '-p') && /writeFileSync|createWriteStream/.test(w[i + 1]!))
      paths.push(`(a script that writes elsewhere: ${w[i + 1]})`);
  }
  return paths.filter((p) => p !== '/dev/null');
}

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

test("the README's walk writes only under $WALK, made by mktemp first, and shows the agents", () => {
  const section = walkSection(readme);
  const lines = commands(section);
  assert.equal(lines[0], 'WALK=$(mktemp -d)', 'the walk starts by making its temporary directory');
  const written = lines.flatMap((line) => writtenPaths(line).map((path) => ({ line, path })));
  // The walk downloads a photo and writes three upload samples: the check sees them.
  assert.ok(written.length >= 4, `the walk's writes were not found: ${JSON.stringify(written)}`);
  const outside = written.filter(({ path }) => !/^"?\$WALK\/[^/"]+"?$/.test(path));
  assert.deepEqual(outside, [], 'every file the walk writes is under "$WALK/"');
  assert.match(section, /rm -r "\$WALK"/, 'the walk says how to remove its directory');

  // The agents: who they are, where they sign in, the console, and the command that makes one.
  assert.match(section, /\*\*agents\*\*/);
  assert.match(section, /agent console/);
  assert.match(section, /http:\/\/localhost:3000\/agent\/login/);
  assert.ok(
    lines.some((line) => /npm run -s cli -- agent create /.test(line)),
    'the walk creates an agent',
  );
});

test('the walk check sees a write into the repository', () => {
  // The parser above on lines a careless edit could add: each is reported, none passes.
  const bad = [
    'curl -s -o photo.jpg http://localhost:3000/x',
    'node -e \'fs.writeFileSync(process.argv[1], "x")\' invoice.pdf',
    'cp /usr/bin/true notes.pdf',
    'curl -s http://localhost:3000/x > out.json',
    'curl -s -o "$WALK/../escape.jpg" http://localhost:3000/x',
  ];
  for (const line of bad) {
    const paths = writtenPaths(line);
    assert.equal(paths.length, 1, line);
    assert.doesNotMatch(paths[0]!, /^"?\$WALK\/[^/"]+"?$/, line);
  }
  assert.deepEqual(writtenPaths('curl -s -X POST http://x -d a=b > /dev/null'), []);
});
