import { rateWindows } from './rate';

/** Messages a take loop gets in `seconds`, simulating the fixed windows of rateWindows. */
function simulate(perMinute: number, seconds: number): number[] {
  const { exact, pace } = rateWindows(perMinute);
  const windows = [exact, pace].filter((w) => w !== null);
  const state = windows.map(() => ({ start: -Infinity, used: 0 }));
  const sent: number[] = [];
  const stepMs = 10;
  for (let t = 0; t < seconds * 1000; t += stepMs) {
    // A window starts at the first take after the previous one expired (as in Redis).
    let granted = true;
    const taken: number[] = [];
    for (const [i, w] of windows.entries()) {
      const s = state[i] as { start: number; used: number };
      if (t >= s.start + w.durationSec * 1000) {
        s.start = t;
        s.used = 0;
      }
      if (s.used >= w.points) {
        granted = false;
        break;
      }
      s.used++;
      taken.push(i);
    }
    if (!granted) {
      // The exact window's point is given back when the pace window refuses.
      for (const i of taken) (state[i] as { used: number }).used--;
      continue;
    }
    sent.push(t);
  }
  return sent;
}

describe('campaign rate windows', () => {
  it('use one exact window when it holds the rate without a burst', () => {
    expect(rateWindows(600)).toEqual({ exact: { durationSec: 1, points: 10 }, pace: null });
    expect(rateWindows(60)).toEqual({ exact: { durationSec: 1, points: 1 }, pace: null });
    expect(rateWindows(30)).toEqual({ exact: { durationSec: 2, points: 1 }, pace: null });
    expect(rateWindows(1)).toEqual({ exact: { durationSec: 60, points: 1 }, pace: null });
  });

  it('add a pace window when the exact one would burst', () => {
    expect(rateWindows(599)).toEqual({
      exact: { durationSec: 60, points: 599 },
      pace: { durationSec: 1, points: 10 },
    });
    expect(rateWindows(7)).toEqual({
      exact: { durationSec: 60, points: 7 },
      pace: { durationSec: 8, points: 1 },
    });
  });

  it.each([1, 7, 45, 59, 60, 90, 137, 599, 600])(
    'hold %i a minute over ten minutes, with no minute over the rate',
    (perMinute) => {
      const sent = simulate(perMinute, 600);
      expect(sent.length).toBe(perMinute * 10);
      for (let m = 0; m < 10; m++) {
        const inMinute = sent.filter((t) => t >= m * 60_000 && t < (m + 1) * 60_000).length;
        expect(inMinute).toBe(perMinute);
      }
    },
  );
});
