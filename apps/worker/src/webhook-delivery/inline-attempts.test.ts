import { InlineAttempts, SLOW_ATTEMPT_MS, type Unit } from './inline-attempts';

/** Takes units of `tenantId` until there are none left for it. */
const takeAll = (inline: InlineAttempts, tenantId: string): Unit[] => {
  const units: Unit[] = [];
  for (let u = inline.take(tenantId); u; u = inline.take(tenantId)) units.push(u);
  return units;
};

describe('InlineAttempts', () => {
  it('leaves half the budget to other tenants', () => {
    const inline = new InlineAttempts(8);
    // Tenant C (an event fanning out to many hung subscriptions) takes what it can.
    const c = takeAll(inline, 'C');
    expect(c).toHaveLength(4);
    // Tenant A's first attempts still find room, up to the budget.
    expect([1, 2, 3, 4].map(() => inline.take('A') !== undefined)).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(inline.take('B')).toBeUndefined();
    inline.untake(c[0] as Unit);
    // Given back once only.
    inline.untake(c[0] as Unit);
    expect(inline.take('B')).toBeDefined();
    expect(inline.take('B')).toBeUndefined();
  });

  it('gives a unit back when its attempt ends', async () => {
    const inline = new InlineAttempts(2);
    const unit = inline.take('C') as Unit;
    expect(inline.take('C')).toBeUndefined();
    await inline.start(unit, async () => undefined);
    expect(inline.take('C')).toBeDefined();
  });

  it('leaves room for other subscriptions and tenants once attempts are slow', () => {
    let now = 1_000_000;
    const inline = new InlineAttempts(8, () => now);
    // One subscription of tenant A hangs: its attempts hold A's whole share.
    expect(takeAll(inline, 'A')).toHaveLength(4);
    expect(inline.roomFor('A')).toBe(0);
    now += SLOW_ATTEMPT_MS - 1;
    expect(inline.roomFor('A')).toBe(0);
    // What the relay's claim is told: A has no room (B holds no unit: the share).
    expect(inline.rooms()).toEqual(new Map([['A', 0]]));
    // Slow now: the relay takes A's events again, and its other subscriptions get units.
    now += 1;
    expect(inline.roomFor('A')).toBe(4);
    expect(inline.rooms()).toEqual(new Map([['A', 4]]));
    expect(takeAll(inline, 'A')).toHaveLength(4);
    // Every unit is taken, half of them by slow attempts: the relay still has room for
    // events (their first attempts go to delivery jobs), no unit is over the budget.
    expect(inline.free).toBe(0);
    expect(inline.take('B')).toBeUndefined();
    expect(inline.roomFor('B')).toBe(4);
    now += SLOW_ATTEMPT_MS;
    expect(inline.room).toBe(8);
    expect(inline.take('B')).toBeUndefined();
  });

  it('frees a unit when its POST is over, before its outcome is recorded', async () => {
    const inline = new InlineAttempts(4);
    let recorded: () => void = () => undefined;
    const record = new Promise<void>((resolve) => (recorded = resolve));
    const onFree = jest.fn();
    const [unit] = takeAll(inline, 'C');
    const run = inline.start(
      unit as Unit,
      async (sent) => {
        sent();
        await record;
      },
      onFree,
    );
    // The record is still on its way, and tenant C may start another POST.
    expect(onFree).toHaveBeenCalledTimes(1);
    expect(inline.take('C')).toBeDefined();
    recorded();
    await run;
  });

  it('lets at most the budget wait for their records', async () => {
    const inline = new InlineAttempts(1);
    let recorded: () => void = () => undefined;
    const record = new Promise<void>((resolve) => (recorded = resolve));
    const onFree = jest.fn();
    const unit = inline.take('A') as Unit;
    const run = inline.start(
      unit,
      async (sent) => {
        sent();
        await record;
      },
      onFree,
    );
    // The POST is over, but one record waits: no room until it is in.
    expect(inline.free).toBe(0);
    expect(inline.take('B')).toBeUndefined();
    recorded();
    await run;
    expect(onFree).toHaveBeenCalledTimes(2);
    expect(inline.take('B')).toBeDefined();
  });
});
