import type { Outcome } from './client';
import { secs } from './env';
import type { HaSet } from './ha-set';

/** How long writes may take to come back before the phase gives up waiting (a hang guard). */
const WRITES_BACK_WITHIN_MS = 90_000;
/** How long a killed member may take to rejoin as a replica. */
const REJOIN_WITHIN_MS = 120_000;

const ok = (o: Outcome) => o.status >= 200 && o.status < 300;

/** `check` every 250 ms until true or `timeoutMs` passed; whether it became true. */
export async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

/**
 * For each lane: ms from `from` until the answer of its first success sent after its last
 * failure sent in [from, to); 0 when it did not fail there, null when it has not succeeded
 * since. A lane's failure is any answer but a 2xx (a 503, a 409 of a key still running, no
 * answer).
 */
export function writesBack(
  outcomes: Outcome[],
  lanes: string[],
  from: number,
  to: number,
): Record<string, number | null> {
  const back: Record<string, number | null> = {};
  for (const name of lanes) {
    const mine = outcomes.filter((o) => o.lane === name && o.at >= from && o.at < to);
    const failures = mine.filter((o) => !ok(o));
    if (!failures.length) {
      back[name] = 0;
      continue;
    }
    const last = Math.max(...failures.map((o) => o.at));
    const first = mine.find((o) => o.at > last && ok(o));
    back[name] = first ? first.at + first.ms - from : null;
  }
  return back;
}

/**
 * Waits until every lane has succeeded after its failures since `from` (at least `minMs`
 * after it, so that the fault has shown); returns the times of `writesBack` then.
 */
export async function awaitWritesBack(
  outcomes: Outcome[],
  lanes: string[],
  from: number,
  minMs = 5000,
): Promise<Record<string, number | null>> {
  const back = () => writesBack(outcomes, lanes, from, Date.now());
  await until(
    async () => Date.now() - from >= minMs && Object.values(back()).every((v) => v !== null),
    WRITES_BACK_WITHIN_MS,
  );
  return back();
}

/** `ingest 12.1 s, outbound 13.0 s, sms never`. */
export const describeBack = (back: Record<string, number | null>): string =>
  Object.entries(back)
    .map(([name, ms]) => `${name} ${ms === null ? 'never' : ms === 0 ? 'no failure' : secs(ms)}`)
    .join(', ');

/** The longest of `back`'s times (Infinity when a lane never came back). */
export const slowest = (back: Record<string, number | null>): number =>
  Math.max(0, ...Object.values(back).map((v) => (v === null ? Infinity : v)));

/**
 * Starts a killed Postgres member's Patroni again and waits until it is a replica (Patroni
 * rewinds it if needed) and the leader has a synchronous standby again. Returns a sentence
 * and whether it rejoined.
 */
export async function rejoinPg(set: HaSet, name: string): Promise<[string, boolean]> {
  const member = set.members.find((m) => m.name === name);
  if (!member) throw new Error(`no member ${name}`);
  const started = Date.now();
  set.restartPg(member);
  const rejoined = await until(
    async () => ['sync', 'replica'].includes(await set.pgRole(member)),
    REJOIN_WITHIN_MS,
  );
  const took = Date.now() - started;
  if (!rejoined)
    return [`${name} not a replica within ${secs(took)} (${await set.pgRole(member)})`, false];
  await until(
    async () => (await Promise.all(set.members.map((m) => set.pgRole(m)))).includes('sync'),
    60_000,
  );
  return [`${name} a replica ${secs(took)} after its restart`, true];
}

/**
 * Starts a killed Redis primary again (empty, as a primary) and waits until the Sentinels
 * have made it a replica of the new primary, in sync, and the new primary has both replicas.
 */
export async function rejoinRedis(set: HaSet, port: number): Promise<[string, boolean]> {
  const started = Date.now();
  await set.restartRedis(port);
  const rejoined = await until(
    async () => (await set.redisRole(port)) === 'slave connected',
    REJOIN_WITHIN_MS,
  );
  const took = Date.now() - started;
  if (!rejoined)
    return [`${port} not a replica within ${secs(took)} (${await set.redisRole(port)})`, false];
  await until(async () => (await set.redisReplicasOnline(await set.redisPrimary())) >= 2, 60_000);
  return [`${port} a replica ${secs(took)} after its restart`, true];
}
