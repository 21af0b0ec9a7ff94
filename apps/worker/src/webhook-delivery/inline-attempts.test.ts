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
});
