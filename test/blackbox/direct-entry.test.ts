/**
 * The production entry (docs/how-to/deploy.md "The production entry and the container image"): the Dockerfile's CMD is `node`
 * itself, with no npm and no shell in between, so the server receives SIGTERM and shuts down
 * gracefully. It is spawned exactly as the image runs it, with the image's environment, a
 * production configuration and a temporary DATA_DIR; the image's HEALTHCHECK command is run
 * against it. compose.yaml's environment, filled in, passes production's configuration rules.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { DockerfileParser, Env } from 'dockerfile-ast';
import { parse as parseYaml } from 'yaml';
import { parseConfig } from '../../src/config.ts';
import { freshBuild, spawnedServerEnv, spawnNode, tempDataDir } from '../helpers/spawn.ts';
import { ROOT } from '../helpers/root.ts';

const dockerfile = DockerfileParser.parse(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));

/** An instruction's exec-form (JSON array) command, as Docker would run it. */
function execForm(json: string): string[] {
  const args: unknown = JSON.parse(json);
  assert.ok(Array.isArray(args) && args.every((a) => typeof a === 'string'), json);
  return args;
}

/** A production configuration that passes every production rule (src/config.ts). */
function productionSettings(): Record<string, string> {
  const origin = 'https://portico.example.test';
  return {
    APP_BASE_URL: origin,
    TOKEN_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    PROVIDER_APP_ID: '1234567890',
    PROVIDER_APP_SECRET: randomBytes(24).toString('hex'),
    PROVIDER_REDIRECT_URI: `${origin}/api/auth/partner/callback`,
    PROVIDER_WEBHOOK_VERIFY_TOKEN: randomBytes(16).toString('hex'),
  };
}

test('the image runs node directly: it serves in production, passes its HEALTHCHECK, exits 0 on SIGTERM', async (t) => {
  const cmd = execForm(dockerfile.getCMDs().at(-1)!.getArgumentsContent()!);
  assert.equal(cmd[0], 'node', 'the CMD is node itself, in exec form (no npm, no shell)');
  const imageEnv = Object.fromEntries(
    dockerfile
      .getInstructions()
      .filter((i) => i instanceof Env)
      .flatMap((i) => i.getProperties())
      .map((p) => [p.getName(), p.getValue() ?? '']),
  );
  assert.equal(imageEnv.NODE_ENV, 'production');

  // The CMD's paths are relative to the image's WORKDIR: here, the folder of a fresh build.
  const server = spawnNode(t, cmd.slice(1), {
    cwd: dirname(freshBuild()),
    // No call to the real provider from a test: spawnedServerEnv turns the health check off.
    env: spawnedServerEnv({
      ...imageEnv,
      ...productionSettings(),
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: tempDataDir(),
    }),
  });
  await server.waitForLine(/"msg":"Portico is serving"/, 'the direct entry did not start');
  const [, port] = await server.waitForLine(
    /Server listening at http:\/\/127\.0\.0\.1:(\d+)/,
    'no address',
  );
  // The process that logs is the process we started: nothing stands between it and a signal.
  const serving = server.output.find((l) => l.includes('"msg":"Portico is serving"'))!;
  assert.equal((JSON.parse(serving) as { pid: number }).pid, server.child.pid);

  const healthcheck = execForm(
    dockerfile
      .getHEALTHCHECKs()[0]!
      .getArgumentsContent()!
      .replace(/^CMD\s+/, ''),
  );
  assert.equal(healthcheck[0], 'node', 'the image has no curl: the health check is node');
  const probe = () =>
    spawnNode(t, healthcheck.slice(1), {
      env: { PATH: process.env.PATH ?? '', PORT: port! },
    }).waitForExit('the HEALTHCHECK command did not finish');
  assert.equal(await probe(), 0, 'healthy while serving');

  assert.equal(await server.stop('SIGTERM'), 0, server.output.join('\n'));
  assert.ok(server.output.some((l) => l.includes('"msg":"stopped"')));
  assert.equal(await probe(), 1, 'unhealthy once stopped');
});

test('compose.yaml: each instance’s environment, filled in, is a valid production configuration', () => {
  const compose = parseYaml(readFileSync(join(ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as {
    services: Record<
      string,
      { image?: string; environment?: Record<string, string>; ports?: string[] }
    >;
  };
  const given: Record<string, string> = { ...productionSettings(), POSTGRES_PASSWORD: 'a1b2c3' };
  // Compose's interpolation of `${VAR:?message}` (required) and `${VAR:-default}`.
  const interpolate = (value: string) =>
    value.replace(
      /\$\{(\w+)(?::([?-])([^}]*))?\}/g,
      (_, name: string, kind?: string, rest?: string) => {
        const set = given[name];
        if (set) return set;
        if (kind === '?') throw new Error(`${name}: ${rest}`);
        return kind === '-' ? (rest ?? '') : '';
      },
    );
  const instances = Object.entries(compose.services).filter(([, s]) => s.image === 'portico:local');
  assert.equal(instances.length, 2);
  for (const [name, service] of instances) {
    const env = Object.fromEntries(
      Object.entries(service.environment ?? {}).map(([k, v]) => [k, interpolate(String(v))]),
    );
    const config = parseConfig(env); // throws on any production rule it breaks
    assert.equal(config.isProduction, true, name);
    assert.match(config.DATABASE_URL ?? '', /^postgres:\/\/portico:a1b2c3@postgres:5432\//, name);
    assert.equal(config.REDIS_URL, 'redis://redis:6379', name);
    assert.equal(service.ports?.length, 1, `${name} is reachable by its own port only`);
  }
  // A secret left unset stops compose with its message, before anything starts.
  delete given.PROVIDER_APP_SECRET;
  assert.throws(
    () =>
      instances.map(([, s]) =>
        Object.values(s.environment ?? {}).map((v) => interpolate(String(v))),
      ),
    /PROVIDER_APP_SECRET: set PROVIDER_APP_SECRET/,
  );
  for (const name of ['postgres', 'redis'])
    assert.equal(compose.services[name]?.ports, undefined, `${name} publishes no port`);
});
