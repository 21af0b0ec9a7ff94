import { Writable } from 'node:stream';
import { createLogger, fixedFieldLogger, withLogContext } from './index';

/** A destination that keeps every line, parsed. */
function sink(): { stream: Writable; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  return { stream, lines };
}

describe('createLogger', () => {
  it('redacts credentials wherever a line carries them', () => {
    const { stream, lines } = sink();
    const logger = createLogger('api', 'info', stream);
    logger.info(
      { req: { headers: { authorization: 'Bearer sk_live_x' } }, hook: { secret: 's' } },
      'oops',
    );
    expect(lines[0]).toMatchObject({
      req: { headers: { authorization: '[redacted]' } },
      hook: { secret: '[redacted]' },
    });
  });

  it("the fixed-field twin writes the same line to the same destination, in order, at the logger's level", () => {
    const { stream, lines } = sink();
    const logger = createLogger('api', 'info', stream);
    const twin = fixedFieldLogger(logger);
    expect(twin).not.toBe(logger);
    withLogContext({ request_id: 'req_1' }, () => {
      logger.info({ res: { statusCode: 200 } }, 'first');
      twin.info({ res: { statusCode: 200 } }, 'second');
      twin.debug('not written');
    });
    expect(lines.map((l) => l.msg)).toEqual(['first', 'second']);
    const [a, b] = lines as [Record<string, unknown>, Record<string, unknown>];
    const { time: _ta, msg: _ma, ...restA } = a;
    const { time: _tb, msg: _mb, ...restB } = b;
    expect(restB).toEqual(restA);
    expect(restB).toMatchObject({ name: 'api', level: 30, request_id: 'req_1' });
  });

  it("a line's own fields do not stick to the later lines of its unit of work", () => {
    const { stream, lines } = sink();
    const logger = createLogger('worker', 'info', stream);
    withLogContext({ event_id: 'evt_1' }, () => {
      logger.info({ callId: 'call_1', err: { message: 'boom' } }, 'first');
      logger.info('second');
    });
    expect(lines[0]).toMatchObject({ event_id: 'evt_1', callId: 'call_1' });
    expect(lines[1]).toMatchObject({ event_id: 'evt_1' });
    expect(lines[1]).not.toHaveProperty('callId');
    expect(lines[1]).not.toHaveProperty('err');
  });

  it('a logger made elsewhere is its own twin', () => {
    const child = createLogger('api', 'info', sink().stream).child({ a: 1 });
    expect(fixedFieldLogger(child)).toBe(child);
  });
});
