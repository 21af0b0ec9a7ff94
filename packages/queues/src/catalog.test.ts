import { catalog } from './catalog';
import { defineJob } from './job-definition';
import { QUEUES } from './names';

describe('job catalog', () => {
  it('validates payloads at the processor boundary', () => {
    expect(catalog.deliveries.parse({ v: 1, deliveryId: 'dlv_1', round: 1, attempt: 2 })).toEqual({
      v: 1,
      deliveryId: 'dlv_1',
      round: 1,
      attempt: 2,
    });
    for (const bad of [
      null,
      'dlv_1',
      { v: 2, deliveryId: 'dlv_1', round: 1, attempt: 1 },
      { v: 1, deliveryId: 'dlv_1', round: 1 },
      { v: 1, deliveryId: 'dlv_1', round: 1, attempt: 0 },
      { v: 1, deliveryId: 'dlv_1', round: 1, attempt: 1, extra: true },
    ]) {
      expect(catalog.deliveries.parse(bad)).toBeNull();
    }
  });

  it("dial and SMS jobs may carry their request's id; jobs made without one stay valid", () => {
    for (const def of [catalog.outboundCalls, catalog.sms] as const) {
      const ids = def === catalog.sms ? { smsId: 'sms_1' } : { callId: 'call_1' };
      const parse = def.parse as (d: unknown) => unknown;
      expect(parse({ v: 1, ...ids })).toEqual({ v: 1, ...ids });
      expect(parse({ v: 1, ...ids, requestId: 'req_0a' })).toEqual({
        v: 1,
        ...ids,
        requestId: 'req_0a',
      });
      for (const requestId of ['', 'a b', 'x'.repeat(129), 7]) {
        expect(parse({ v: 1, ...ids, requestId })).toBeNull();
      }
    }
  });

  it('jobs a request makes carry its trace; with tracing off their payload is left alone', () => {
    const traced = Object.entries(catalog)
      .filter(([, def]) => def.carriesTrace)
      .map(([key]) => key);
    expect(traced.sort()).toEqual([
      'campaigns',
      'leadImports',
      'outboundCalls',
      'provisioning',
      'sms',
    ]);
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const jobs = [
      [catalog.outboundCalls, { v: 1, callId: 'call_1' }],
      [catalog.leadImports, { v: 1, importId: 'imp_1' }],
      [catalog.campaigns, { v: 1, campaignId: 'cmp_1' }],
    ] as const;
    for (const [def, data] of jobs) {
      const parse = def.parse as (d: unknown) => unknown;
      const spec = def.spec as (d: unknown) => { data: unknown };
      expect(parse({ ...data, traceparent })).toEqual({ ...data, traceparent });
      expect(parse({ ...data, traceparent: 'x'.repeat(201) })).toBeNull();
      // Tracing is not started in this process: nothing is added, a given one is kept.
      expect(spec(data).data).toEqual(data);
      expect(spec({ ...data, traceparent }).data).toEqual({ ...data, traceparent });
    }
  });

  it('builds jobs with deterministic ids and the catalog name', () => {
    const spec = catalog.deliveries.spec(
      { v: 1, deliveryId: 'dlv_1', round: 2, attempt: 3 },
      { delay: 500 },
    );
    expect(spec).toEqual({
      name: 'delivery',
      data: { v: 1, deliveryId: 'dlv_1', round: 2, attempt: 3 },
      opts: { delay: 500, jobId: 'dlv_1-r2-a3' },
    });
    expect(
      catalog.deliveries.spec({ v: 1, deliveryId: 'dlv_1', round: 2, attempt: 3, claims: 0 }).opts
        .jobId,
    ).toBe('dlv_1-r2-a3');
    expect(
      catalog.deliveries.spec({ v: 1, deliveryId: 'dlv_1', round: 2, attempt: 3, claims: 2 }).opts
        .jobId,
    ).toBe('dlv_1-r2-a3-c2');
    expect(catalog.outboundCalls.spec({ v: 1, callId: 'call_9' }).opts.jobId).toBe('call_9');
    expect(
      catalog.provisioning.spec({ v: 1, receptionistId: 'rcp_1', round: 2, attempt: 3 }).opts.jobId,
    ).toBe('rcp_1-r2-a3');
    expect(catalog.sms.spec({ v: 1, smsId: 'sms_9' })).toMatchObject({
      name: 'send',
      opts: { jobId: 'sms_9' },
    });
    expect(
      catalog.smsSimulatorReceipts.spec(
        { v: 1, smsId: 'sms_9', receptionistId: 'rcp_1', status: 'undelivered' },
        { delay: 300 },
      ),
    ).toMatchObject({ name: 'receipt', opts: { delay: 300, jobId: 'sms_9' } });
    expect(
      catalog.smsSimulatorReceipts.parse({
        v: 1,
        smsId: 'sms_9',
        receptionistId: 'rcp_1',
        status: 'sent',
      }),
    ).toBeNull();
  });

  it("refuses a job id with ':' (BullMQ reserves it)", () => {
    const def = defineJob<{ id: string }>({
      queue: 'q',
      name: 'n',
      schema: { type: 'object' },
      jobId: (d) => d.id,
      timings: { lockDurationMs: 1000, stalledIntervalMs: 1000 },
    });
    expect(() => def.spec({ id: 'a:b' })).toThrow(/contains ':'/);
  });

  it('spells every queue name once', () => {
    const names = Object.values(QUEUES);
    expect(new Set(names).size).toBe(names.length);
    expect(QUEUES.outboundCalls).toBe('outbound-calls');
  });
});
