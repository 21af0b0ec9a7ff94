import { Writable } from 'node:stream';
import { createLogger, withLogContext } from '@switchboard/logger';
import { jobLogFields } from './queue-worker';

test("a job's log fields name the rows its payload concerns, snake_cased", () => {
  expect(
    jobLogFields('deliveries', 'dlv_1-r1-a1', { v: 1, deliveryId: 'dlv_1', round: 1 }),
  ).toEqual({ queue: 'deliveries', job_id: 'dlv_1-r1-a1', delivery_id: 'dlv_1' });
  expect(jobLogFields('sms', 'sms_1', { v: 1, smsId: 'sms_1' })).toMatchObject({ sms_id: 'sms_1' });
  expect(jobLogFields('campaigns', 'cmp_1', { v: 1, campaignId: 'cmp_1' })).toMatchObject({
    campaign_id: 'cmp_1',
  });
});

test('every line logged inside a job carries its fields; lines outside do not', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger('worker', 'info', sink);
  await withLogContext(jobLogFields('events', 'evt_1', { v: 1, eventId: 'evt_1' }), async () => {
    await new Promise((r) => setImmediate(r));
    logger.info('inside');
  });
  logger.info('outside');
  expect(lines).toEqual([
    expect.objectContaining({ msg: 'inside', event_id: 'evt_1', queue: 'events' }),
    expect.not.objectContaining({ event_id: expect.anything() }),
  ]);
});
