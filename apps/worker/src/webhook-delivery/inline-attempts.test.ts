import { InlineAttempts } from './inline-attempts';

describe('InlineAttempts', () => {
  it('leaves half the budget to other tenants', () => {
    const inline = new InlineAttempts(8);
    // Tenant C (an event fanning out to many hung subscriptions) takes what it can.
    let c = 0;
    while (inline.take('C')) c++;
    expect(c).toBe(4);
    // Tenant A's first attempts still find room, up to the budget.
    expect([1, 2, 3, 4].map(() => inline.take('A'))).toEqual([true, true, true, true]);
    expect(inline.take('B')).toBe(false);
    inline.untake('C');
    expect(inline.take('B')).toBe(true);
  });

  it('gives a unit back when its attempt ends', async () => {
    const inline = new InlineAttempts(2);
    expect(inline.take('C')).toBe(true);
    expect(inline.take('C')).toBe(false);
    await inline.start('C', async () => undefined);
    expect(inline.take('C')).toBe(true);
  });

  it('frees a unit when its POST is over, before its outcome is recorded', async () => {
    const inline = new InlineAttempts(4);
    let recorded: () => void = () => undefined;
    const record = new Promise<void>((resolve) => (recorded = resolve));
    const onFree = jest.fn();
    while (inline.take('C'));
    const run = inline.start(
      'C',
      async (sent) => {
        sent();
        await record;
      },
      onFree,
    );
    // The record is still on its way, and tenant C may start another POST.
    expect(onFree).toHaveBeenCalledTimes(1);
    expect(inline.take('C')).toBe(true);
    recorded();
    await run;
  });

  it('lets at most the budget wait for their records', async () => {
    const inline = new InlineAttempts(1);
    let recorded: () => void = () => undefined;
    const record = new Promise<void>((resolve) => (recorded = resolve));
    const onFree = jest.fn();
    expect(inline.take('A')).toBe(true);
    const run = inline.start(
      'A',
      async (sent) => {
        sent();
        await record;
      },
      onFree,
    );
    // The POST is over, but one record waits: no room until it is in.
    expect(inline.free).toBe(0);
    expect(inline.take('B')).toBe(false);
    recorded();
    await run;
    expect(onFree).toHaveBeenCalledTimes(2);
    expect(inline.take('B')).toBe(true);
  });
});
