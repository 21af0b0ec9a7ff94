import { Writable } from 'node:stream';
import { createLogger } from '@switchboard/logger';
import { AttemptLog } from './attempt-log';

/** A logger at `level` whose lines are kept, parsed. */
function captured(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger('worker', level, sink), lines };
}

const fields = () => ({ deliveryId: 'dlv_1', outcome: 'succeeded' });

it('at info, successes are one summary line per interval, never a line each', async () => {
  const { logger, lines } = captured('info');
  const log = new AttemptLog(logger, 60_000);
  for (const ms of [10, 30, 20]) log.success(fields, ms);
  expect(lines).toHaveLength(0);
  log.flush();
  log.flush(); // nothing counted since: nothing written
  await log.close();
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ msg: 'delivery attempts', succeeded: 3, meanMs: 20, maxMs: 30 });
});

it('at debug, each success is a line of its own as well; close writes the last counts', async () => {
  const { logger, lines } = captured('debug');
  const log = new AttemptLog(logger, 60_000);
  log.success(fields, 5);
  expect(lines).toEqual([
    expect.objectContaining({ msg: 'delivery attempt', deliveryId: 'dlv_1' }),
  ]);
  await log.close();
  expect(lines[1]).toMatchObject({ msg: 'delivery attempts', succeeded: 1 });
});
