import { percentUsed, periodOf } from './read-usage';

describe('percentUsed', () => {
  it.each([
    [0, 1000, 0],
    [1, 3, 33.3],
    [2, 3, 66.7],
    [1, 16, 6.3], // 6.25 rounds half up
    [1, 8, 12.5],
    [1, 80, 1.3], // 1.25
    [799, 1000, 79.9],
    [800, 1000, 80],
    [1500, 1000, 150],
    [5, 0, 0],
  ])('%i of %i minutes is %d %%', (used, included, expected) => {
    expect(percentUsed(used, included)).toBe(expected);
  });
});

describe('periodOf', () => {
  it('is the calendar month (UTC) of now by default', () => {
    const p = periodOf(undefined, new Date('2026-11-30T23:59:59.999Z'));
    expect(p.key).toBe('2026-11-01');
    expect(p.start.toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect(p.end.toISOString()).toBe('2026-12-01T00:00:00.000Z');
  });

  it('reads YYYY-MM, December ending in the next year', () => {
    const p = periodOf('2025-12');
    expect(p.start.toISOString()).toBe('2025-12-01T00:00:00.000Z');
    expect(p.end.toISOString()).toBe('2026-01-01T00:00:00.000Z');
  });
});
