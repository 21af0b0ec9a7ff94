import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '@switchboard/db';
import type { Redis } from '@switchboard/queues';
import { applyTelephonyMessage } from '@switchboard/telephony';
import type { SmsProvider, SmsRequest, SmsSendResult } from './provider';

/** Wall-clock timings at SIMULATOR_SPEED=1; each is divided by the speed. */
const TIMINGS = {
  /** Reaching the carrier, before it has the message. */
  connectMs: 150,
  /** The carrier's answer, after it has the message. */
  answerMs: 150,
  /** The delivery receipt comes up to twice this after the carrier accepted the message. */
  receiptMs: 300,
};

/** How long the carrier log is kept after its last write (it only serves tests and demos). */
const LOG_TTL_S = 86_400;

/**
 * The simulated carrier's log of hand-offs: one counter per message id, in Redis under the
 * deployment's prefix, so that it outlives any worker process. A counter above 1 would mean a
 * message was handed to the carrier twice, which the sender's claim must make impossible.
 * Simulator only: a real provider keeps its own records.
 */
export const simulatorLogKey = (queuePrefix: string): string =>
  `${queuePrefix}:sms-simulator:handoffs`;

/** Every message the simulated carrier received, with how many times: for tests and demos. */
export async function simulatorHandoffs(
  redis: Redis,
  queuePrefix: string,
): Promise<Record<string, number>> {
  const raw = await redis.hgetall(simulatorLogKey(queuePrefix));
  return Object.fromEntries(Object.entries(raw).map(([id, n]) => [id, Number(n)]));
}

/**
 * The built-in provider: a carrier that takes a few hundred milliseconds at
 * SIMULATOR_SPEED=1, logs every hand-off (see `simulatorHandoffs`), rejects a `to` ending in
 * 0003 (`carrier_rejected`, docs/API.md, SMS) and accepts anything else. An accepted
 * message gets a delivery receipt through telephony ingestion's code path (`sms.status`),
 * at a random moment up to `receiptMs` × 2 later, so sometimes before the sender recorded
 * `sent`, as real carriers do: `undelivered` (`unreachable_handset`) for a `to` ending in
 * 0004, `delivered` otherwise. Receipts not yet sent when the worker stops are dropped (the
 * message stays `sent`, as with a carrier that never reports).
 */
export class SimulatorSmsProvider implements SmsProvider {
  readonly name = 'simulator';
  private readonly receipts = new Set<NodeJS.Timeout>();

  constructor(
    private readonly speed: number,
    private readonly redis: Redis,
    private readonly queuePrefix: string,
    /** Where receipts are applied; none: no receipts. */
    private readonly db: Db | null = null,
  ) {}

  async send(req: SmsRequest): Promise<SmsSendResult> {
    await sleep(TIMINGS.connectMs / this.speed);
    const key = simulatorLogKey(this.queuePrefix);
    await this.redis.multi().hincrby(key, req.smsId, 1).expire(key, LOG_TTL_S).exec();
    await sleep(TIMINGS.answerMs / this.speed);
    if (req.to.endsWith('0003')) return { status: 'rejected', errorCode: 'carrier_rejected' };
    const providerMessageId = `simsms_${req.smsId}`;
    this.scheduleReceipt(req, providerMessageId);
    return { status: 'accepted', providerMessageId };
  }

  private scheduleReceipt(req: SmsRequest, providerMessageId: string): void {
    const db = this.db;
    if (!db) return;
    const undelivered = req.to.endsWith('0004');
    const timer = setTimeout(
      () => {
        this.receipts.delete(timer);
        applyTelephonyMessage(db, {
          id: `simrcpt_${req.smsId}`,
          type: 'sms.status',
          receptionist_id: req.receptionistId,
          provider_message_id: providerMessageId,
          status: undelivered ? 'undelivered' : 'delivered',
          ...(undelivered ? { error_code: 'unreachable_handset' } : {}),
          occurred_at: new Date().toISOString(),
        }).catch(() => undefined);
      },
      (Math.random() * 2 * TIMINGS.receiptMs) / this.speed,
    );
    this.receipts.add(timer);
  }

  async close(): Promise<void> {
    for (const timer of this.receipts) clearTimeout(timer);
    this.receipts.clear();
  }
}
