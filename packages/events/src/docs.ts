import type { EventType } from './catalog';
import type { EventData } from './emit';

/**
 * What each event means, for the `webhooks` section of the OpenAPI document and the API
 * reference. Optional per event: an event type without an entry still appears there, with
 * its schema and a generic sentence, the moment it joins the catalog.
 */
export const EVENT_DESCRIPTIONS: { readonly [K in EventType]?: string } = {
  'call.started': 'A call was answered (inbound) or picked up (outbound) and is in progress.',
  'call.completed':
    'A call ended. `outcome` says what it achieved; a no-answer, busy or failed outbound call ' +
    'also ends with this event (`outcome: "no_outcome"`). `booking` is present when one was made.',
  'call.missed':
    'An inbound call was not answered by the assistant, or the caller hung up before it ' +
    'answered. `recovery_scheduled` says whether a call-back is planned.',
  'sms.received': 'A text message reached a receptionist. `is_opt_out` marks STOP-like messages.',
  'sms.sent': 'A text message left through the carrier (`campaign_id` when a campaign sent it).',
  'sms.delivered':
    'The carrier reported a sent message delivered to the handset (after its `sms.sent`; ' +
    'receipts may come late).',
  'sms.failed':
    'An outbound message will not reach the recipient: the send failed (`status: "failed"`) ' +
    'or the carrier reported it undelivered (`status: "undelivered"`). `error_code` says why.',
  'receptionist.ready': 'A receptionist finished provisioning: it has a number and an assistant.',
  'receptionist.error': 'Provisioning a receptionist failed; `error_code` says why.',
  'lead.created': 'A lead was created (API, CSV import, a call or MCP).',
  'lead.updated': 'A lead changed; `changed_fields` lists what actually changed.',
  'campaign.completed':
    'Every recipient of an SMS campaign was handled. `delivered` and `undelivered` are the ' +
    'receipts known at completion; later receipts show on the campaign.',
  'usage.threshold':
    "The billing period's minutes reached 80 % or 100 % of the plan. Account-level: the " +
    'envelope has no `receptionist_id`. Sent once per period and threshold.',
  'webhook.test':
    'Sent by `POST /webhooks/{id}/test` only, to check an endpoint and its signature code. ' +
    'Account-level; it also carries `type: "webhook.test"`.',
  'webhook.failing':
    "A subscription's consecutive failed deliveries reached half, then three quarters, of " +
    'the threshold that disables it (sent once at each level per streak). Account-level; ' +
    'delivered to the other subscriptions that listen for it, never to the one it is about.',
  'webhook.disabled':
    'A subscription was disabled: by its failures (`reason: "consecutive_failures"`, its open ' +
    'deliveries cancelled: `pending_cancelled`) or paused by the tenant (`reason: "manual"`, ' +
    'nothing cancelled). Account-level; never delivered to the subscription it is about.',
  'webhook.recovered':
    'A subscription that had sent `webhook.failing` delivered successfully again; ' +
    '`failures_before` is the streak the success ended (0 when the tenant re-enabled the ' +
    'endpoint first, which zeroes it). Account-level; never sent to the one it is about.',
  'test_data.deleted':
    "`DELETE /test-data` finished wiping the tenant's test-mode data (ended calls, events " +
    'and their deliveries, as they were when it was asked). A test-mode event, account-level: ' +
    "it goes to the tenant's test-mode subscriptions, which are kept.",
};

/** A realistic `data` of each event, checked against the catalog's schema by the tests. */
export const EVENT_DATA_EXAMPLES: { readonly [K in EventType]?: EventData<K> } = {
  'call.started': {
    call_id: 'call_8Qz3kV1mN7pX2bR4',
    direction: 'inbound',
    from: '+14155550123',
    to: '+14155550199',
    started_at: '2026-11-21T10:15:00.000Z',
  },
  'call.completed': {
    call_id: 'call_8Qz3kV1mN7pX2bR4',
    direction: 'inbound',
    from: '+14155550123',
    to: '+14155550199',
    duration_seconds: 95,
    outcome: 'booked',
    customer_name: 'Dana Whitfield',
    customer_phone: '+14155550123',
    transcript_summary: 'Dana booked a boiler service for Tuesday at 09:30.',
    booking: {
      confirmation: 'BK-1042',
      date: '2026-11-24',
      time: '09:30',
      service_type: 'Boiler service',
      address: '12 Elm Street, Springfield',
    },
    started_at: '2026-11-21T10:15:00.000Z',
    ended_at: '2026-11-21T10:16:35.000Z',
  },
  'call.missed': {
    call_id: 'call_3Jd9sL2qW8eT5yU1',
    from: '+14155550123',
    to: '+14155550199',
    missed_at: '2026-11-21T11:02:10.000Z',
    recovery_scheduled: true,
  },
  'sms.received': {
    sms_id: 'sms_5Hk2pQ9wE3rT7yU6',
    from: '+14155550123',
    to: '+14155550199',
    message: 'Can we move my appointment to Wednesday?',
    received_at: '2026-11-21T12:00:00.000Z',
    is_opt_out: false,
  },
  'sms.sent': {
    sms_id: 'sms_7Lm4nB8vC2xZ1aS3',
    from: '+14155550199',
    to: '+14155550123',
    message: 'Your boiler service is booked for Tuesday at 09:30.',
    sent_at: '2026-11-21T10:17:00.000Z',
    campaign_id: null,
  },
  'sms.delivered': {
    sms_id: 'sms_7Lm4nB8vC2xZ1aS3',
    from: '+14155550199',
    to: '+14155550123',
    delivered_at: '2026-11-21T10:17:02.000Z',
    campaign_id: null,
  },
  'sms.failed': {
    sms_id: 'sms_8Mn5oC9wD3yA2bT4',
    from: '+14155550199',
    to: '+14155550004',
    status: 'undelivered',
    error_code: 'unreachable_handset',
    error_message: 'The carrier could not reach the handset',
    failed_at: '2026-11-21T10:17:03.000Z',
    campaign_id: null,
  },
  'receptionist.ready': {
    phone_number: '+14155550199',
    assistant_id: 'asst_4Tg7hJ2kL9mN',
    plan: 'standard',
    provisioned_at: '2026-11-20T09:00:01.000Z',
  },
  'receptionist.error': {
    error_code: 'number_unavailable',
    message: 'No numbers are available in area code 999',
    failed_at: '2026-11-20T09:00:03.000Z',
  },
  'lead.created': {
    lead_id: 'lead_2Ws6eD9rF3tG',
    name: 'Dana Whitfield',
    phone: '+14155550123',
    email: 'dana@example.com',
    source: 'call',
    status: 'new',
    created_at: '2026-11-21T10:16:40.000Z',
  },
  'lead.updated': {
    lead_id: 'lead_2Ws6eD9rF3tG',
    name: 'Dana Whitfield',
    phone: '+14155550123',
    email: 'dana@example.com',
    source: 'call',
    status: 'qualified',
    updated_at: '2026-11-22T08:30:00.000Z',
    changed_fields: ['status'],
  },
  'campaign.completed': {
    campaign_id: 'cmp_9Pl1kM3nB5vC',
    name: 'November check-ups',
    recipients: 120,
    sent: 114,
    failed: 2,
    opted_out: 4,
    delivered: 109,
    undelivered: 3,
    skipped: 0,
    completed_at: '2026-11-21T15:00:00.000Z',
  },
  'usage.threshold': {
    threshold: 80,
    minutes_used: 803,
    minutes_included: 1000,
    billing_period_end: '2026-12-01T00:00:00.000Z',
  },
  'webhook.test': {
    subscription_id: '6f1c2b7e-4a3d-4f8e-9b2a-1c5d7e9f0a3b',
    message: 'This is a test event from Switchboard.',
  },
  'webhook.failing': {
    subscription_id: '6f1c2b7e-4a3d-4f8e-9b2a-1c5d7e9f0a3b',
    url: 'https://hooks.example.com/switchboard',
    consecutive_failures: 10,
    disable_threshold: 20,
    last_status_code: 503,
    last_error: null,
  },
  'webhook.disabled': {
    subscription_id: '6f1c2b7e-4a3d-4f8e-9b2a-1c5d7e9f0a3b',
    url: 'https://hooks.example.com/switchboard',
    reason: 'consecutive_failures',
    disabled_at: '2026-11-21T11:02:17.000Z',
    pending_cancelled: 3,
  },
  'webhook.recovered': {
    subscription_id: '6f1c2b7e-4a3d-4f8e-9b2a-1c5d7e9f0a3b',
    url: 'https://hooks.example.com/switchboard',
    recovered_at: '2026-11-21T11:40:03.000Z',
    failures_before: 12,
  },
  'test_data.deleted': {
    deletion_id: 'tdd_4Kp8sW2nR6vY1cX3',
    calls_deleted: 12,
    events_deleted: 31,
    deliveries_deleted: 29,
    sms_deleted: 8,
    leads_deleted: 40,
    campaigns_deleted: 2,
    requested_at: '2026-11-21T12:00:00.000Z',
    completed_at: '2026-11-21T12:00:01.250Z',
  },
};
