/**
 * The development sandbox's state on disk, so that restarting `npm start` (or `npm run dev`,
 * which restarts on every save) keeps what Portico relies on: the app (its id, secret and
 * webhook verify token), the people's grants, the tokens issued (a stored connection's token
 * stays valid, so the health check does not revoke it), and the Cloud API's WABA state
 * (templates, the phones' messages, the service windows, number signals, verified webhooks, the apps subscribed to each WABA and
 * the numbers registered with their PINs).
 * The WABAs and their numbers are derived from the grant's person (cloud-state.ts), so they come
 * back with the grant.
 *
 * Not kept: single-use authorization codes (60 s), the call log, send counts, open
 * conversations (a new one starts after a restart) and media bytes (a medium sent before a
 * restart answers code 100, as one the provider deleted).
 *
 * One JSON file in the data directory, written atomically (a temporary file in the same
 * directory, flushed to disk, then renamed over the old one) a short while after any request
 * that reached the sandbox and when it closes; read once at start. Mode 0600: it holds the app
 * secret and sandbox tokens (never real provider secrets). Tests' sandboxes pass no file and
 * stay in memory.
 *
 * @see docs/decisions/0042-sandbox-state-file.md
 */
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import type { NumberSignals, PhoneMessage, SandboxTemplate } from './cloud-state.ts';
import {
  grantKey,
  type Grant,
  type SandboxAppConfig,
  type SandboxState,
  type TokenRecord,
} from './sandbox-state.ts';

/** The file's name in the data directory. */
export const SANDBOX_STATE_FILE = 'sandbox-provider.json';

/** What the file holds (version 1). */
export interface SandboxSnapshot {
  version: 1;
  apps: SandboxAppConfig[];
  grants: Grant[];
  tokens: [string, TokenRecord][];
  cloud: {
    templates: [string, SandboxTemplate[]][];
    messages: PhoneMessage[];
    lastInbound: [string, number][];
    /** Free entry points (cloud-state.ts): absent in a file written before they were kept. */
    referralAt?: [string, number][];
    freeEntryUntil?: [string, number][];
    numberSignals: [string, NumberSignals][];
    verifiedApps: string[];
    /** Onboarding (cloud-onboarding.ts): absent in a file written before it was kept. */
    subscribedApps?: [string, string[]][];
    registered?: string[];
    twoStepPins?: [string, string][];
    registrationRequests?: [string, number[]][];
    registrationBlockedUntil?: [string, number][];
  };
}

/** The state worth keeping; expired tokens are left out (revoked ones stay revoked). */
export function snapshotOf(state: SandboxState): SandboxSnapshot {
  const now = state.now();
  return {
    version: 1,
    apps: [...state.apps.values()],
    grants: [...state.grants.values()],
    tokens: [...state.tokens.entries()].filter(([, r]) => r.expiresAtMs > now),
    cloud: {
      templates: [...state.cloud.templates.entries()],
      messages: state.cloud.messages,
      lastInbound: [...state.cloud.lastInbound.entries()],
      referralAt: [...state.cloud.referralAt.entries()],
      freeEntryUntil: [...state.cloud.freeEntryUntil.entries()],
      numberSignals: [...state.cloud.numberSignals.entries()],
      verifiedApps: [...state.cloud.verifiedApps],
      subscribedApps: [...state.cloud.subscribedApps].map(([waba, apps]) => [waba, [...apps]]),
      registered: [...state.cloud.registered],
      twoStepPins: [...state.cloud.twoStepPins],
      registrationRequests: [...state.cloud.registrationRequests],
      registrationBlockedUntil: [...state.cloud.registrationBlockedUntil],
    },
  };
}

/**
 * Put a snapshot's state into a new `state`. The apps given at start win over the stored ones of
 * the same id (their URLs follow the configuration); stored apps of other ids are kept.
 */
export function restoreSnapshot(state: SandboxState, snapshot: SandboxSnapshot): void {
  for (const app of snapshot.apps) if (!state.apps.has(app.appId)) state.apps.set(app.appId, app);
  for (const grant of snapshot.grants) state.grants.set(grantKey(grant.appId, grant.userId), grant);
  for (const [token, record] of snapshot.tokens) state.tokens.set(token, record);
  const { cloud } = snapshot;
  for (const [waba, list] of cloud.templates) state.cloud.templates.set(waba, list);
  state.cloud.messages.push(...cloud.messages);
  for (const [key, at] of cloud.lastInbound) state.cloud.lastInbound.set(key, at);
  for (const [key, at] of cloud.referralAt ?? []) state.cloud.referralAt.set(key, at);
  for (const [key, until] of cloud.freeEntryUntil ?? []) state.cloud.freeEntryUntil.set(key, until);
  for (const [id, signals] of cloud.numberSignals) state.cloud.numberSignals.set(id, signals);
  for (const appId of cloud.verifiedApps) state.cloud.verifiedApps.add(appId);
  for (const [waba, apps] of cloud.subscribedApps ?? [])
    state.cloud.subscribedApps.set(waba, new Set(apps));
  for (const id of cloud.registered ?? []) state.cloud.registered.add(id);
  for (const [id, pin] of cloud.twoStepPins ?? []) state.cloud.twoStepPins.set(id, pin);
  for (const [id, times] of cloud.registrationRequests ?? [])
    state.cloud.registrationRequests.set(id, times);
  for (const [id, until] of cloud.registrationBlockedUntil ?? [])
    state.cloud.registrationBlockedUntil.set(id, until);
}

/** Whether `value` has the shape of a version-1 snapshot (the file is ours, but may be old). */
function isSnapshot(value: unknown): value is SandboxSnapshot {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Partial<SandboxSnapshot>;
  const cloud = v.cloud;
  return (
    v.version === 1 &&
    Array.isArray(v.apps) &&
    Array.isArray(v.grants) &&
    Array.isArray(v.tokens) &&
    typeof cloud === 'object' &&
    cloud !== null &&
    Array.isArray(cloud.templates) &&
    Array.isArray(cloud.messages) &&
    Array.isArray(cloud.lastInbound) &&
    Array.isArray(cloud.numberSignals) &&
    Array.isArray(cloud.verifiedApps)
  );
}

/**
 * The snapshot in `path`: undefined when there is none yet.
 *
 * @throws Error naming the file when it is not a snapshot this version reads (delete it to
 *   start the sandbox empty).
 */
export function readSnapshot(path: string): SandboxSnapshot | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (!isSnapshot(value))
    throw new Error(
      `${path} is not the sandbox provider's saved state; delete it to start the sandbox empty`,
    );
  return value;
}

/** Write `snapshot` to `path` atomically (temporary file, fsync, rename), mode 0600. */
export function writeSnapshot(path: string, snapshot: SandboxSnapshot): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  const fd = openSync(temporary, 'w', 0o600);
  try {
    writeSync(fd, JSON.stringify(snapshot));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
}

/** How long after a request the state is written (requests in between share the write). */
const SAVE_DELAY_MS = 200;

/**
 * Keeps `path` up to date with `state`: `changed()` after a request schedules a write (at most
 * one pending), `close()` writes what is pending. A write that fails is reported to `onError`
 * and tried again at the next change.
 */
export function persistTo(
  path: string,
  state: SandboxState,
  onError: (err: unknown) => void,
): { changed(): void; close(): void } {
  let timer: NodeJS.Timeout | undefined;
  let dirty = false;
  const save = () => {
    timer = undefined;
    if (!dirty) return;
    dirty = false;
    try {
      writeSnapshot(path, snapshotOf(state));
    } catch (err) {
      dirty = true;
      onError(err);
    }
  };
  return {
    changed() {
      dirty = true;
      timer ??= setTimeout(save, SAVE_DELAY_MS);
    },
    close() {
      clearTimeout(timer);
      save();
    },
  };
}
