import { Queue, Worker } from 'bullmq';
import { createRedis, dropErrorsAfterClose, type Redis } from '@switchboard/queues';
import { startPrivateRedis, type PrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

// BullMQ removes a connection's listeners on close() even while its start (the version
// check's INFO) is pending; the start's failure is then an 'error' with no listener, thrown
// as an unhandled rejection (packages/queues/src/closed-connections.ts). Redis is frozen so
// that the INFO is still pending when the queue or worker closes; closing the connection
// under it makes it fail. Without the guard jest reports that rejection ("Unhandled error.
// (Error: Connection is closed.") as this file's failure, and nothing is dropped.
let redis: PrivateRedis;
let connection: Redis;
const unhandled: unknown[] = [];
const record = (err: unknown) => unhandled.push(err);

beforeAll(async () => {
  redis = await startPrivateRedis();
  process.on('unhandledRejection', record);
});
afterAll(async () => {
  process.off('unhandledRejection', record);
  redis?.thaw();
  await redis?.stop();
});
beforeEach(async () => {
  unhandled.length = 0;
  connection = createRedis(redis.url, 'worker');
  await waitFor('the connection', () => connection.status === 'ready');
  redis.freeze();
});
afterEach(() => {
  redis.thaw();
  if (connection.status !== 'end') connection.disconnect();
});

/** One turn of the event loop after a rejection: Node has reported it if nobody handled it. */
const afterRejectionsAreReported = () => new Promise((resolve) => setImmediate(resolve));

/** A queue or a worker, listened to as the product listens to them. */
type Closable = { close(): Promise<void> };
const listened = <T extends { on(event: 'error', listener: () => void): unknown }>(t: T): T => {
  t.on('error', () => undefined);
  return t;
};

it.each<[string, () => Closable]>([
  [
    'a worker',
    () =>
      listened(
        new Worker('close-while-starting', async () => undefined, { connection, autorun: false }),
      ),
  ],
  ['a queue', () => listened(new Queue('close-while-starting', { connection }))],
])('%s closed during its start drops the start failure instead of throwing it', async (_, make) => {
  const dropped: unknown[] = [];
  const target = dropErrorsAfterClose(make(), (err) => dropped.push(err));
  await target.close();
  connection.disconnect();
  // A failure names what it found: the server's state (T: frozen), the connection's, and
  // BullMQ's view of its start.
  await waitFor('the start failure, dropped', () => dropped.length > 0).catch((err: Error) => {
    const bull = (target as unknown as { connection?: { status?: string } }).connection;
    throw new Error(
      `${err.message}: redis-server ${redis.state()}, connection ${connection.status}, ` +
        `BullMQ connection ${bull?.status ?? '?'}`,
    );
  });
  await afterRejectionsAreReported();
  expect(String(dropped[0])).toContain('Connection is closed');
  expect(unhandled).toEqual([]);
});
