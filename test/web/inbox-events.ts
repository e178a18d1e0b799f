/**
 * A reader of `/inbox/events` for the inbox tests: server-sent events over real HTTP with the
 * session's cookie, until a condition holds or a deadline passes (never hangs).
 */
import { request } from 'node:http';

export interface ServerEvent {
  event: string;
  data: string;
  /** The event's `id:` field, when it has one. */
  id?: string | undefined;
}

/** Read server-sent events from `url` until `until` says stop (or `deadlineMs` pass). */
export function readEvents(
  url: string,
  cookie: string,
  until: (events: ServerEvent[]) => boolean,
  onOpen: () => Promise<void>,
  deadlineMs = 5_000,
  headers: Record<string, string> = {},
): Promise<{ status: number; type: string; events: ServerEvent[] }> {
  return new Promise((resolve, reject) => {
    const events: ServerEvent[] = [];
    const req = request(
      url,
      { headers: { ...headers, cookie, accept: 'text/event-stream' } },
      (res) => {
        let buffer = '';
        const finish = () => {
          clearTimeout(deadline);
          req.destroy();
          resolve({
            status: res.statusCode ?? 0,
            type: String(res.headers['content-type']),
            events,
          });
        };
        const deadline = setTimeout(finish, deadlineMs);
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let end;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const event = /^event: (.*)$/m.exec(block)?.[1];
            const data = /^data: (.*)$/m.exec(block)?.[1];
            const id = /^id: (.*)$/m.exec(block)?.[1];
            if (event && data !== undefined) {
              events.push({ event, data, id });
              if (event === 'ready') onOpen().catch(reject);
            }
          }
          if (until(events)) finish();
        });
        res.on('end', finish);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
