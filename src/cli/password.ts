/**
 * Reading a password for the admin CLI (`user set-password`): from a terminal (typed twice,
 * not echoed, asked again when refused) or from a pipe (its first line).
 */
import { passwordProblem } from '../platform/passwords.ts';
import { UsageError } from '../platform/errors.ts';

/** Most bytes kept of one line: longer input is cut here (the service refuses over 1024). */
const LINE_MAX_BYTES = 4096;
/** Attempts at a terminal before giving up. */
const ATTEMPTS = 3;

/**
 * Lines from standard input, read with `data` events (not an async iterator, which would
 * destroy the stream on the first `break` and leave nothing for the second question). Bytes
 * after a line's end wait in `#pending` for the next line.
 */
class StdinLines {
  #pending: number[] = [];
  #ended = false;

  /**
   * The next line, without its ending: up to LF, CR or Ctrl-D (or the end of input), the
   * UTF-8 bytes decoded. On a terminal Backspace drops the last character.
   *
   * @throws UsageError `Cancelled.` on Ctrl-C at a terminal.
   */
  async next(): Promise<string> {
    const stdin = process.stdin;
    const tty = stdin.isTTY === true;
    const bytes: number[] = [];
    let outcome: 'line' | 'cancelled' | null = null;
    const take = (input: number[]): number[] => {
      for (let i = 0; i < input.length; i++) {
        const b = input[i]!;
        if (b === 0x0a || b === 0x0d || b === 0x04) {
          outcome = 'line';
          // A CRLF pair is one line ending.
          const skip = b === 0x0d && input[i + 1] === 0x0a ? 2 : 1;
          return input.slice(i + skip);
        }
        if (tty && b === 0x03) {
          outcome = 'cancelled';
          return [];
        }
        if (tty && (b === 0x7f || b === 0x08)) {
          // Backspace: drop the last character (with its UTF-8 continuation bytes).
          while (bytes.length > 0 && ((bytes.pop() ?? 0) & 0xc0) === 0x80);
          continue;
        }
        if (bytes.length < LINE_MAX_BYTES) bytes.push(b);
      }
      return [];
    };
    this.#pending = take(this.#pending);
    if (outcome === null && !this.#ended) {
      await new Promise<void>((resolve) => {
        const onData = (chunk: Buffer) => {
          this.#pending = take([...chunk]);
          if (outcome !== null) done();
        };
        const onEnd = () => {
          this.#ended = true;
          done();
        };
        const done = () => {
          stdin.off('data', onData).off('end', onEnd).pause();
          resolve();
        };
        stdin.on('data', onData).on('end', onEnd).resume();
      });
    }
    if (outcome === 'cancelled') throw new UsageError('Cancelled.');
    return Buffer.from(bytes).toString('utf8');
  }
}

/** Ask `prompt` on the terminal and read the answer without echoing it. */
async function askHidden(lines: StdinLines, prompt: string): Promise<string> {
  // Echo off before the prompt shows: a person (or a test) typing at once is never echoed.
  process.stdin.setRawMode(true);
  process.stderr.write(prompt);
  try {
    return await lines.next();
  } finally {
    process.stdin.setRawMode(false);
    process.stderr.write('\n');
  }
}

/**
 * The new password. At a terminal: asked twice without echo; a password the service would
 * refuse (too short, too long) or two entries that differ ask again, up to three attempts. From
 * a pipe: the first line of standard input, checked by the service as it is. Never an
 * argument: arguments are visible in the process list and kept in shell history.
 *
 * @throws UsageError `Cancelled.` on Ctrl-C; `Give the password on standard input.` when the
 *   line is empty; `No password was set: …` after three failed attempts at a terminal.
 */
export async function readNewPassword(): Promise<string> {
  const lines = new StdinLines();
  if (!process.stdin.isTTY) {
    const password = await lines.next();
    if (!password) throw new UsageError('Give the password on standard input.');
    return password;
  }
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const password = await askHidden(lines, 'New password: ');
    const problem = password ? passwordProblem(password) : 'The password is empty.';
    if (problem) {
      process.stderr.write(`${problem}\n`);
      continue;
    }
    if ((await askHidden(lines, 'Repeat the password: ')) === password) return password;
    process.stderr.write('The two entries differ.\n');
  }
  throw new UsageError(`No password was set: ${ATTEMPTS} attempts failed.`);
}
