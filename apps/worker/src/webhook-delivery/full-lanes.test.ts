import { FULL_FOR_MS, FullLanes } from './full-lanes';

const A = { tenantId: 'A', targetId: 'sub_a' };
const B = { tenantId: 'A', targetId: 'sub_b' };

/** FullLanes over `free` slots per target id and this process's per `tenant/target` key. */
function fullLanes(
  free: Record<string, number>,
  mine: Record<string, { held: number; waiting: number }> = {},
) {
  let clock = 1_000_000;
  const asked: string[][] = [];
  const lanes = new FullLanes(
    async (targetIds) => {
      asked.push([...targetIds]);
      return targetIds.map((id) => free[id] ?? 0);
    },
    (tenantId, targetId) => mine[`${tenantId}/${targetId}`] ?? { held: 0, waiting: 0 },
    FULL_FOR_MS,
    () => clock,
  );
  return { lanes, asked, advance: (ms: number) => (clock += ms) };
}

describe('FullLanes', () => {
  it('bounds no tenant, and asks Redis nothing, until a lane refuses one', async () => {
    const { lanes, asked } = fullLanes({});
    lanes.served(A);
    expect(await lanes.bounds()).toEqual(new Map());
    expect(asked).toEqual([]);
  });

  it("bounds a refused tenant by its lane's free slots and this process's own less those awaited", async () => {
    const { lanes, asked } = fullLanes({ sub_a: 3 }, { 'A/sub_a': { held: 2, waiting: 1 } });
    lanes.refused(A, 'target');
    expect(await lanes.bounds()).toEqual(new Map([['A', 4]]));
    expect(asked).toEqual([['sub_a']]);
  });

  it('lets one delivery through a lane with no room, so the bound can lift', async () => {
    const { lanes } = fullLanes({});
    lanes.refused(A, 'target');
    lanes.served(A); // one of its own slots, then refused again: still the same lane
    expect(await lanes.bounds()).toEqual(new Map([['A', 1]]));
  });

  it('claims nothing for a lane with no room while an attempt waits here for its slot', async () => {
    const { lanes } = fullLanes({ sub_a: 1 }, { 'A/sub_a': { held: 1, waiting: 2 } });
    lanes.refused(A, 'target');
    expect(await lanes.bounds()).toEqual(new Map([['A', 0]]));
  });

  it("lifts the bound when another of the tenant's targets serves it", async () => {
    const { lanes } = fullLanes({});
    lanes.refused(A, 'target');
    lanes.served(B);
    expect(await lanes.bounds()).toEqual(new Map());
  });

  it('leaves a tenant its full tenant lane refused unbounded', async () => {
    const { lanes, asked } = fullLanes({});
    lanes.refused(A, 'tenant');
    expect(await lanes.bounds()).toEqual(new Map());
    expect(asked).toEqual([]);
  });

  it('forgets a refusal FULL_FOR_MS after it', async () => {
    const { lanes, advance } = fullLanes({});
    lanes.refused(A, 'target');
    advance(FULL_FOR_MS - 1);
    expect((await lanes.bounds()).get('A')).toBe(1);
    advance(1);
    expect(await lanes.bounds()).toEqual(new Map());
  });
});
