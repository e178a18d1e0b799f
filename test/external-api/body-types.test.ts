/**
 * JSON bodies are validated as sent, never coerced: every field of every operation's JSON body,
 * found by walking the OpenAPI document (not a hand-written list), is sent with a value of the
 * wrong type, and the answer is a 400 naming that field. A new operation or field is covered
 * the moment it is in the document.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { concreteUrl } from '../helpers/auth-suite.ts';
import { backends } from '../helpers/storage.ts';

const [backend] = backends();

type Schema = Record<string, unknown>;
type Path = (string | number)[];

/** One request: the field under test, its wrong value, and the values that pick its branch. */
interface Case {
  path: Path;
  value: unknown;
  fixed: [Path, unknown][];
}

/** A value of the wrong type for a field of `type`, one that a coercing validator would take. */
function wrongValue(type: unknown): unknown {
  if (Array.isArray(type)) return [null];
  switch (type) {
    case 'string':
      return 12;
    case 'integer':
    case 'number':
      return '12';
    case 'boolean':
      return 'false';
    case 'array':
      return 'x';
    case 'object':
      return 'x';
    default:
      return undefined;
  }
}

function setAt(body: Record<string, unknown>, path: Path, value: unknown): void {
  let node: Record<string | number, unknown> = body;
  path.forEach((key, i) => {
    if (i === path.length - 1) {
      node[key] = value;
      return;
    }
    node[key] ??= typeof path[i + 1] === 'number' ? [] : {};
    node = node[key] as Record<string | number, unknown>;
  });
}

function cases(doc: Schema, root: unknown): Case[] {
  const components = (doc.components as { schemas: Record<string, Schema> }).schemas;
  const resolve = (s: unknown): Schema => {
    let schema = s as Schema;
    while (typeof schema.$ref === 'string') {
      schema = components[schema.$ref.replace('#/components/schemas/', '')]!;
    }
    return schema;
  };
  const out: Case[] = [];
  const walk = (raw: unknown, path: Path, fixed: [Path, unknown][], depth: number): void => {
    if (depth > 8) return;
    const s = resolve(raw);
    const branches = (s.oneOf ?? s.anyOf) as unknown[] | undefined;
    const discriminator = s.discriminator as { propertyName: string } | undefined;
    if (branches && discriminator) {
      const name = discriminator.propertyName;
      for (const branch of branches) {
        const tagSchema = resolve((resolve(branch).properties as Record<string, Schema>)[name]);
        const tag = tagSchema.const ?? (tagSchema.enum as unknown[] | undefined)?.[0];
        walk(branch, path, [...fixed, [[...path, name], tag]], depth + 1);
      }
      return;
    }
    if (branches) {
      // A union of one scalar type (enums of strings): the field is that type.
      const types = new Set(branches.map((b) => resolve(b).type));
      const [type] = types;
      if (types.size === 1 && typeof type === 'string' && !['object', 'array'].includes(type)) {
        out.push({ path, value: wrongValue(type), fixed });
      }
      return;
    }
    if (path.length > 0 && s.type !== undefined) {
      out.push({ path, value: wrongValue(s.type), fixed });
    }
    const fixedHere = new Set(fixed.map(([p]) => p.join('.')));
    for (const [key, child] of Object.entries((s.properties ?? {}) as Record<string, unknown>)) {
      if (!fixedHere.has([...path, key].join('.'))) walk(child, [...path, key], fixed, depth + 1);
    }
    if (s.type === 'array' && s.items) walk(s.items, [...path, 0], fixed, depth + 1);
  };
  walk(root, [], [], 0);
  return out.filter((c) => c.value !== undefined);
}

test('a wrong type in any field of any JSON body is refused with 400 naming the field', async (t) => {
  const { app, services } = await buildTestApp(t, backend!, {
    RATE_LIMIT_PER_MINUTE: '100000',
  });
  const { token } = await createPortal(services);
  await app.ready();
  const doc = app.swagger() as unknown as Schema;

  let operations = 0;
  let checked = 0;
  const paths = doc.paths as Record<string, Record<string, Schema>>;
  for (const [url, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const content = (op.requestBody as { content?: Record<string, Schema> } | undefined)?.content;
      const json = content?.['application/json'];
      if (!json) continue;
      operations++;
      // A path parameter gets the auth suite's placeholder, or `1` where its schema wants digits
      // (the body must be what the route refuses, not its path).
      const params = (op.parameters ?? []) as { in: string; name: string; schema?: Schema }[];
      const target = concreteUrl(
        url.replace(/\{(\w+)\}/g, (_, name: string) => {
          const pattern = params.find((p) => p.in === 'path' && p.name === name)?.schema?.pattern;
          return typeof pattern === 'string' && !new RegExp(pattern).test(concreteUrl(`:${name}`))
            ? '1'
            : `:${name}`;
        }),
      );
      for (const c of cases(doc, json.schema)) {
        const body: Record<string, unknown> = {};
        for (const [p, v] of c.fixed) setAt(body, p, v);
        setAt(body, c.path, c.value);
        const field = ['body', ...c.path].join('.');
        const res = await app.inject({
          method: method.toUpperCase() as 'POST',
          url: target,
          headers: { authorization: token, 'content-type': 'application/json' },
          payload: JSON.stringify(body),
        });
        const name = `${method.toUpperCase()} ${url} ${field}=${JSON.stringify(c.value)}`;
        assert.equal(res.statusCode, 400, `${name}: ${res.body}`);
        const error = res.json().error as { code: string; details?: { field: string }[] };
        assert.equal(error.code, 'invalid_request', name);
        assert.ok(
          error.details?.some((d) => d.field === field),
          `${name}: details name ${JSON.stringify(error.details?.map((d) => d.field))}`,
        );
        checked++;
      }
    }
  }
  assert.ok(operations >= 10, `${operations} operations with a JSON body`);
  assert.ok(checked >= 100, `${checked} fields checked`);
});
