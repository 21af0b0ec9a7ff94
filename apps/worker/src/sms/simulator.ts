import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '@switchboard/db';
import { enqueue, type Queues, type Redis } from '@switchboard/queues';
import { applyTelephonyMessage } from '@switchboard/telephony';
import type { JobHandler } from '../queue-worker';
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

/** When the simulated carrier's receipt is due; by default a random moment (see TIMINGS). */
export interface SimulatorSmsOptions {
  /** Fixed delay of every receipt after the carrier accepted its message (tests). */
  receiptDelayMs?: number;
}

/**
 * The built-in provider: a carrier that takes a few hundred milliseconds at
 * SIMULATOR_SPEED=1, logs every hand-off (see `simulatorHandoffs`), rejects a `to` ending in
 * 0003 (`carrier_rejected`, docs/API.md, SMS) and accepts anything else. An accepted
 * message gets a delivery receipt through telephony ingestion's code path (`sms.status`),
 * at a random moment up to `receiptMs` × 2 later, so sometimes before the sender recorded
 * `sent`, as real carriers do: `undelivered` (`unreachable_handset`) for a `to` ending in
 * 0004, `delivered` otherwise. The receipt is a delayed job in Redis
 * (`smsSimulatorReceipts`), added before the carrier answers, so a worker that stops (or
 * dies) before it is due loses nothing: whichever worker runs next applies it.
 */
export class SimulatorSmsProvider implements SmsProvider {
  readonly name = 'simulator';

  constructor(
    private readonly speed: number,
    private readonly redis: Redis,
    private readonly queuePrefix: string,
    /** Where receipts are queued; none: no receipts. */
    private readonly queues: Queues | null = null,
    private readonly opts: SimulatorSmsOptions = {},
  ) {}

  async send(req: SmsRequest): Promise<SmsSendResult> {
    await sleep(TIMINGS.connectMs / this.speed);
    const key = simulatorLogKey(this.queuePrefix);
    await this.redis.multi().hincrby(key, req.smsId, 1).expire(key, LOG_TTL_S).exec();
    await sleep(TIMINGS.answerMs / this.speed);
    if (req.to.endsWith('0003')) return { status: 'rejected', errorCode: 'carrier_rejected' };
    await this.scheduleReceipt(req);
    return { status: 'accepted', providerMessageId: simulatorMessageId(req.smsId) };
  }

  /**
   * Queues the receipt. A failed add (Redis away) loses only the receipt: the message was
   * handed over and stays `sent`, as with a carrier that never reports.
   */
  private async scheduleReceipt(req: SmsRequest): Promise<void> {
    if (!this.queues) return;
    const delay = Math.round(
      this.opts.receiptDelayMs ?? (Math.random() * 2 * TIMINGS.receiptMs) / this.speed,
    );
    const status = req.to.endsWith('0004') ? 'undelivered' : 'delivered';
    await enqueue(this.queues, 'smsSimulatorReceipts', [
      {
        data: { v: 1, smsId: req.smsId, receptionistId: req.receptionistId, status },
        opts: { delay },
      },
    ]).catch(() => undefined);
  }

  async close(): Promise<void> {}
}

/** The simulated carrier's id of a message it accepted. */
const simulatorMessageId = (smsId: string): string => `simsms_${smsId}`;

/**
 * Applies one due simulator receipt as the carrier's `sms.status` through telephony
 * ingestion. Its ingestion id is fixed per message, so a job run twice (stalled, retried
 * after a Postgres error) applies it once.
 */
export function simulatorReceiptProcessor(db: Db): JobHandler<'smsSimulatorReceipts'> {
  return async (job) => {
    const undelivered = job.status === 'undelivered';
    await applyTelephonyMessage(db, {
      id: `simrcpt_${job.smsId}`,
      type: 'sms.status',
      receptionist_id: job.receptionistId,
      provider_message_id: simulatorMessageId(job.smsId),
      status: job.status,
      ...(undelivered ? { error_code: 'unreachable_handset' } : {}),
      occurred_at: new Date().toISOString(),
    });
  };
}
