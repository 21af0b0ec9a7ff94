import { newTimeOrderedId, timeOfId } from './ids';

describe('newTimeOrderedId', () => {
  it('carries the millisecond, and ids of one millisecond increase as they are made', () => {
    const at = new Date('2026-12-08T03:00:00.123Z');
    const ids = Array.from({ length: 1000 }, () => newTimeOrderedId('evt', at));
    for (const id of ids) expect(timeOfId(id)).toEqual(at);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('starts each millisecond at a random tail', () => {
    const tails = [1, 2, 3, 4].map((ms) => newTimeOrderedId('dlv', new Date(ms)).slice(17));
    expect(new Set(tails).size).toBe(4);
    // The top bit of a millisecond's first tail is clear: room for its later ids' steps.
    for (const t of tails) expect(parseInt(t[0] ?? 'f', 16)).toBeLessThan(8);
  });
});
