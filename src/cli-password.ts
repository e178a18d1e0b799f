/**
 * Reading a password for the admin CLI (`user set-password`) from standard input.
 */
import { UsageError } from './platform/errors.ts';

/**
 * The password from standard input: its first line, without the line ending. Never an argument
 * (arguments are visible to other users in the process list and kept in shell history).
 * On a terminal the typed characters are not echoed.
 *
 * Reading stops at LF, CR or Ctrl-D, or once more than 4096 bytes were kept; on a terminal Backspace drops the last
 * character and Ctrl-C cancels. The bytes are decoded as UTF-8.
 *
 * @throws UsageError `Cancelled.` on Ctrl-C at a terminal; `Give the password on standard
 *   input.` when the line is empty.
 */
export async function readPassword(): Promise<string> {
  const stdin = process.stdin;
  if (stdin.isTTY) {
    process.stderr.write('Password: ');
    stdin.setRawMode(true);
  }
  const bytes: number[] = [];
  let cancelled = false;
  try {
    read: for await (const chunk of stdin) {
      for (const b of chunk as Buffer) {
        if (b === 0x0a || b === 0x0d || b === 0x04) break read;
        if (stdin.isTTY && b === 0x03) {
          cancelled = true;
          break read;
        }
        if (stdin.isTTY && (b === 0x7f || b === 0x08)) {
          // Backspace: drop the last character (with its UTF-8 continuation bytes).
          while (bytes.length > 0 && ((bytes.pop() ?? 0) & 0xc0) === 0x80);
          continue;
        }
        bytes.push(b);
        if (bytes.length > 4096) break read;
      }
    }
  } finally {
    if (stdin.isTTY) {
      stdin.setRawMode(false);
      process.stderr.write('\n');
    }
    stdin.pause();
  }
  if (cancelled) throw new UsageError('Cancelled.');
  const password = Buffer.from(bytes).toString('utf8');
  if (!password) throw new UsageError('Give the password on standard input.');
  return password;
}
