/**
 * A small browser for `app.inject`: a cookie jar fed from parsed `Set-Cookie` headers
 * (set-cookie-parser), form posts, and reading a form's hidden CSRF field.
 */
import assert from 'node:assert/strict';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { eq } from 'drizzle-orm';
import { parseSetCookie, type Cookie } from 'set-cookie-parser';
import { users } from '../../src/db/schema/index.ts';
import { hashPassword } from '../../src/platform/passwords.ts';
import type { Services } from '../../src/services.ts';

export const TEST_PASSWORD = 'correct horse battery staple';

/** Every `Set-Cookie` of a response, parsed. */
export function setCookies(res: LightMyRequestResponse): Cookie[] {
  const raw = res.headers['set-cookie'];
  if (raw === undefined) return [];
  return parseSetCookie(Array.isArray(raw) ? raw : [String(raw)], { decodeValues: true });
}

/** Whether a parsed cookie deletes the cookie (Max-Age=0 or an expiry in the past). */
export function isDeletion(cookie: Cookie): boolean {
  return (
    cookie.maxAge === 0 || (cookie.expires !== undefined && cookie.expires.getTime() <= Date.now())
  );
}

export class Browser {
  readonly jar = new Map<string, string>();
  /** Every response seen, for scans. */
  readonly responses: LightMyRequestResponse[] = [];

  constructor(readonly app: FastifyInstance) {}

  private cookieHeader(): string | undefined {
    if (this.jar.size === 0) return undefined;
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private keep(res: LightMyRequestResponse): LightMyRequestResponse {
    this.responses.push(res);
    for (const c of setCookies(res)) {
      if (isDeletion(c)) this.jar.delete(c.name);
      else this.jar.set(c.name, c.value);
    }
    return res;
  }

  async get(url: string, headers: Record<string, string> = {}) {
    const cookie = this.cookieHeader();
    return this.keep(
      await this.app.inject({
        method: 'GET',
        url,
        headers: { ...headers, ...(cookie ? { cookie } : {}) },
      }),
    );
  }

  /** Post a form; an array value repeats its field, as a form's same-named inputs do. */
  async post(url: string, form: Record<string, string | string[] | undefined>) {
    const cookie = this.cookieHeader();
    const body = new URLSearchParams(
      Object.entries(form).flatMap(([k, v]) =>
        v === undefined ? [] : (Array.isArray(v) ? v : [v]).map((one) => [k, one]),
      ),
    ).toString();
    return this.keep(
      await this.app.inject({
        method: 'POST',
        url,
        payload: body,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          ...(cookie ? { cookie } : {}),
        },
      }),
    );
  }

  /** Post a multipart form (fields in the order given, files as `File`s). */
  async postMultipart(url: string, form: FormData) {
    const cookie = this.cookieHeader();
    const encoded = new Request('http://localhost/', { method: 'POST', body: form });
    return this.keep(
      await this.app.inject({
        method: 'POST',
        url,
        payload: Buffer.from(await encoded.arrayBuffer()),
        headers: {
          'content-type': encoded.headers.get('content-type')!,
          ...(cookie ? { cookie } : {}),
        },
      }),
    );
  }

  /** Open /login and sign in; asserts success. */
  async signIn(email: string, password = TEST_PASSWORD, next?: string) {
    const page = await this.get('/login');
    assert.equal(page.statusCode, 200);
    const res = await this.post('/login', { email, password, csrf: csrfOf(page.body), next });
    assert.equal(res.statusCode, 303, res.body);
    return res;
  }
}

/** The value of the first hidden `csrf` field of a page (rendered by preact, attribute order fixed). */
export function csrfOf(html: string): string {
  const m = /<input type="hidden" name="csrf" value="([^"]*)"/.exec(html);
  assert.ok(m, 'page has a CSRF field');
  return m[1]!;
}

/** {@link TEST_PASSWORD}'s stored form (`hashPassword`: scrypt, production cost, one salt). */
let testPasswordHash: Promise<string> | undefined;

/** A portal whose main administrator has a password; returns its code, user id and token. */
export async function portalWithPassword(
  services: Services,
  input: { code?: string; email?: string } = {},
) {
  const email = input.email ?? `admin-${Math.random().toString(36).slice(2)}@example.test`;
  const created = await services.accounts.createPortal({
    name: 'Test portal',
    adminEmail: email,
    code: input.code,
    actor: { type: 'system', id: 'test' },
  });
  // Stored as `setPassword` stores it, but hashed once per process: a hash is ~90 ms of scrypt
  // and this runs for most tests. Sign-ins still verify with scrypt at the production cost;
  // `setPassword` itself is tested in admin/user-set-password and the CLI's tests.
  testPasswordHash ??= hashPassword(TEST_PASSWORD);
  await services.storage.db
    .update(users)
    .set({ passwordHash: await testPasswordHash })
    .where(eq(users.id, created.userId));
  return { ...created, email };
}
