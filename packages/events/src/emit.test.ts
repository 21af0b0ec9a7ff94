import { SUBSCRIPTION_EVENT_TYPES } from '@switchboard/db';
import {
  ACCOUNT_LEVEL_EVENTS,
  buildEnvelope,
  EVENT_TYPES,
  SUBSCRIPTION_EVENTS,
  validateEventData,
} from './index';

describe('event catalog', () => {
  it('covers every documented event type', () => {
    expect(EVENT_TYPES.sort()).toEqual(
      [
        'call.started',
        'call.completed',
        'call.missed',
        'sms.received',
        'sms.sent',
        'sms.delivered',
        'sms.failed',
        'receptionist.ready',
        'receptionist.error',
        'lead.created',
        'lead.updated',
        'campaign.completed',
        'webhook.test',
        'webhook.failing',
        'webhook.disabled',
        'webhook.recovered',
        'usage.threshold',
        'test_data.deleted',
      ].sort(),
    );
  });

  it('lists the same subscription events as the SQL that keeps them from their subscription', () => {
    expect([...SUBSCRIPTION_EVENTS].sort()).toEqual([...SUBSCRIPTION_EVENT_TYPES].sort());
    for (const t of SUBSCRIPTION_EVENTS) expect(ACCOUNT_LEVEL_EVENTS.has(t)).toBe(true);
  });

  it('accepts the documented shape of call.started and rejects a wrong one', () => {
    const ok = {
      call_id: 'call_1',
      direction: 'inbound',
      from: '+15551230001',
      to: '+15551230002',
      started_at: '2026-11-21T10:15:00.000Z',
    };
    expect(validateEventData('call.started', ok)).toBeNull();
    expect(validateEventData('call.started', { ...ok, direction: 'sideways' })).not.toBeNull();
    expect(validateEventData('call.started', { ...ok, extra: 1 })).not.toBeNull();
    expect(validateEventData('call.started', { ...ok, from: '555-1234' })).not.toBeNull();
  });

  it('omits receptionist_id on account-level envelopes', () => {
    const at = new Date('2026-11-21T10:15:00.000Z');
    const account = buildEnvelope({
      id: 'evt_1',
      type: 'usage.threshold',
      receptionistId: null,
      data: {},
      createdAt: at,
      livemode: true,
    });
    expect(account).toEqual({
      id: 'evt_1',
      event: 'usage.threshold',
      data: {},
      timestamp: '2026-11-21T10:15:00.000Z',
      livemode: true,
    });
    const scoped = buildEnvelope({
      id: 'evt_2',
      type: 'call.started',
      receptionistId: 'rcp_1',
      data: {},
      createdAt: at,
      livemode: false,
    });
    expect(Object.keys(scoped)).toEqual([
      'id',
      'event',
      'receptionist_id',
      'data',
      'timestamp',
      'livemode',
    ]);
    expect(scoped.livemode).toBe(false);
  });
});
