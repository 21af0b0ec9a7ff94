import { Writable } from 'node:stream';
import { createLogger } from '@switchboard/logger';
import { RefusalLog } from './refusal-log';

/** A logger at info whose lines are kept, parsed. */
function captured() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger('api', 'info', sink), lines };
}

it('refusals are one summary line per interval: the total, the addresses, the busiest first', () => {
  const { logger, lines } = captured();
  const log = new RefusalLog(logger, 60_000);
  for (let i = 0; i < 7; i++) log.count('127.0.0.2');
  log.count('203.0.113.7');
  log.count('203.0.113.7');
  log.count('198.51.100.1');
  expect(lines).toHaveLength(0);
  log.flush();
  log.flush(); // nothing counted since: nothing written
  expect(lines).toEqual([
    expect.objectContaining({
      msg: 'requests refused early',
      refused: 10,
      addresses: 3,
      busiest: [
        { address: '127.0.0.2', refused: 7 },
        { address: '203.0.113.7', refused: 2 },
        { address: '198.51.100.1', refused: 1 },
      ],
    }),
  ]);
  log.count('127.0.0.2');
  log.close();
  expect(lines[1]).toMatchObject({ refused: 1, addresses: 1 });
});

it('counts past 1,000 addresses in the total only, and names the 5 busiest', () => {
  const { logger, lines } = captured();
  const log = new RefusalLog(logger, 60_000);
  for (let i = 0; i < 1_500; i++) log.count(`10.0.${i >> 8}.${i & 255}`);
  for (let i = 0; i < 3; i++) log.count('10.0.0.9');
  log.close();
  expect(lines[0]).toMatchObject({ refused: 1_503, addresses: 1_000 });
  expect((lines[0]?.busiest as unknown[]).length).toBe(5);
  expect(lines[0]?.busiest).toContainEqual({ address: '10.0.0.9', refused: 4 });
});
