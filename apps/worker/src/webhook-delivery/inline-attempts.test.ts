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

  it('gives a unit given back to the oldest waiter whose tenant has room', async () => {
    const inline = new InlineAttempts(4);
    expect([inline.take('C'), inline.take('C'), inline.take('A'), inline.take('A')]).toEqual([
      true,
      true,
      true,
      true,
    ]);
    const far = Date.now() + 60_000;
    const order: string[] = [];
    const c = inline.takeBy('C', far).then((ok) => order.push(`C ${ok}`));
    const b = inline.takeBy('B', far).then((ok) => order.push(`B ${ok}`));
    // A unit of A comes back: C is at its share (2 of 4), so B, waiting behind it, gets it.
    inline.untake('A');
    await b;
    expect(order).toEqual(['B true']);
    // One of C's own comes back: C's waiter takes it.
    inline.untake('C');
    await c;
    expect(order).toEqual(['B true', 'C true']);
  });

  it('gives up waiting at the deadline', async () => {
    const inline = new InlineAttempts(2);
    expect(inline.take('C')).toBe(true);
    expect(await inline.takeBy('C', Date.now() + 20)).toBe(false);
    expect(await inline.takeBy('C', Date.now() - 1)).toBe(false);
    // The waiter that gave up takes nothing later.
    inline.untake('C');
    expect(inline.take('C')).toBe(true);
  });
});
