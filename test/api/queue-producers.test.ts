import { closeQueues, createQueues, createRedis } from '@switchboard/queues';
import { startPrivateRedis, type PrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';
import { addJob } from '../support/jobs';

// A producer whose start failed (Redis frozen when BullMQ checked its version) is replaced on
// a later use, so the API's enqueues work again once Redis answers (packages/queues/src/queues.ts).
let redis: PrivateRedis;
beforeAll(async () => {
  redis = await startPrivateRedis();
});
afterAll(async () => {
  redis?.thaw();
  await redis?.stop();
});

it('a producer that could not start while Redis was frozen is replaced once Redis answers', async () => {
  const connection = createRedis(redis.url, 'producer');
  await waitFor('the connection', () => connection.status === 'ready');
  redis.freeze();
  const queues = createQueues(connection, '{producers}');
  const first = queues.sms;
  try {
    await expect(first.waitUntilReady()).rejects.toThrow('Command timed out');
  } finally {
    redis.thaw();
  }
  const job = await waitFor(
    'an enqueue to succeed after the thaw',
    () => addJob(queues, 'sms', { v: 1, smsId: 'sms_x' }).catch(() => undefined),
    { timeoutMs: 45_000, intervalMs: 100 },
  );
  expect(job.id).toBeDefined();
  expect(queues.sms).not.toBe(first);
  await closeQueues(queues, connection);
});
