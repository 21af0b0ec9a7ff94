import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from '@switchboard/queues';
import type { SmsProvider, SmsRequest, SmsSendResult } from './provider';

/** Wall-clock timings at SIMULATOR_SPEED=1; each is divided by the speed. */
const TIMINGS = {
  /** Reaching the carrier, before it has the message. */
  connectMs: 150,
  /** The carrier's answer, after it has the message. */
  answerMs: 150,
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
 * 0003 (`carrier_rejected`, docs/API.md, SMS) and accepts anything else.
 */
export class SimulatorSmsProvider implements SmsProvider {
  readonly name = 'simulator';

  constructor(
    private readonly speed: number,
    private readonly redis: Redis,
    private readonly queuePrefix: string,
  ) {}

  async send(req: SmsRequest): Promise<SmsSendResult> {
    await sleep(TIMINGS.connectMs / this.speed);
    const key = simulatorLogKey(this.queuePrefix);
    await this.redis.multi().hincrby(key, req.smsId, 1).expire(key, LOG_TTL_S).exec();
    await sleep(TIMINGS.answerMs / this.speed);
    if (req.to.endsWith('0003')) return { status: 'rejected', errorCode: 'carrier_rejected' };
    return { status: 'accepted', providerMessageId: `simsms_${req.smsId}` };
  }

  async close(): Promise<void> {}
}
