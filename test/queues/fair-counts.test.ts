import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import type { Redis as IORedis } from 'ioredis';
import {
  closeRedis,
  createRedis,
  fairPriorities,
  FairCounts,
  type Redis,
} from '@switchboard/queues';
import { REDIS_URL } from '../support/env';

// The fair counts of a queue (packages/queues/src/fair.ts) against a real Redis: priorities
// from the counts, and the start / re-queue changes of one turn sent together.
let redis: Redis;
let queue: Queue;
let connection: Redis;
const prefix = `{fair-${randomUUID()}}`;

beforeAll(() => {
  redis = createRedis(REDIS_URL, 'worker');
  connection = redis.duplicate();
  queue = new Queue('events', { connection, prefix });
});
afterAll(async () => {
  const client = (await queue.client) as unknown as Redis;
  await client.del(queue.toKey('fair'));
  await queue.close();
  await closeRedis(connection);
  await closeRedis(redis);
});

const countsNow = async (): Promise<Record<string, string>> =>
  ((await queue.client) as unknown as Redis).hgetall(queue.toKey('fair'));

it('gives each group its own ranks, and applies the changes of one turn in one call', async () => {
  expect(await fairPriorities(queue, ['a', 'a', 'b', 'a'])).toEqual([1, 2, 1, 3]);
  const counts = new FairCounts(queue);
  // The first call of a connection may load the script (EVALSHA, NOSCRIPT, EVAL): done here.
  await counts.requeued('warm');
  await counts.started('warm');
  const client = (await queue.client) as unknown as Redis;
  // The commands this client sends that touch the counts (a spy that lets every command
  // through: Redis answers them; MONITOR would also see every other client of the server).
  const calls: string[] = [];
  const io = client as unknown as IORedis;
  const send = io.sendCommand;
  io.sendCommand = function (this: IORedis, ...args: Parameters<IORedis['sendCommand']>) {
    const cmd = args[0] as unknown as { name: string; args: unknown[] };
    if (cmd.args.some((a) => String(a) === queue.toKey('fair'))) calls.push(cmd.name.toLowerCase());
    return send.apply(this, args);
  } as IORedis['sendCommand'];
  // Two starts of a, a re-queue of a, the one start of b: all in the same turn.
  await Promise.all([
    counts.started('a'),
    counts.started('a'),
    counts.requeued('a'),
    counts.started('b'),
  ]);
  // Net: a 3 - 2 + 1 = 2; b 1 - 1 = 0, removed rather than left at 0.
  expect(await countsNow()).toEqual({ a: '2' });
  await counts.started('a');
  await counts.started('a');
  await counts.started('a');
  // Never below 0: a count that would go negative is removed.
  expect(await countsNow()).toEqual({});
  io.sendCommand = send;
  // One EVALSHA per turn (four turns above), never the script text (EVAL).
  expect(calls.filter((c) => c.startsWith('eval'))).toEqual([
    'evalsha',
    'evalsha',
    'evalsha',
    'evalsha',
  ]);
});
