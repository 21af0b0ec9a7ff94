import { setTimeout as sleep } from 'node:timers/promises';
import { answeredCall } from '@switchboard/simulation';
import { notConnectedMessage, type NotConnected } from './messages';
import type { DialRequest, TelephonyProvider, TelephonyReport } from './provider';

/** Wall-clock timings at SIMULATOR_SPEED=1; each is divided by the speed. */
const TIMINGS = {
  /** Rings before the customer answers. */
  answerMs: 1500,
  /** Before the network reports busy, gives up on an unanswered call, or fails. */
  busyMs: 800,
  noAnswerMs: 3000,
  errorMs: 300,
  /** One second of the scripted conversation lasts this long (a ~60 s script → ~3 s). */
  talkMsPerScriptSecond: 50,
};

/** Magic numbers (docs/TELEPHONY.md, The simulator): the last four digits of `to`. */
const MAGIC: ReadonlyArray<readonly [string, NotConnected]> = [
  ['0001', 'busy'],
  ['0002', 'no_answer'],
  ['0003', 'error'],
];

const WAIT_BEFORE: Record<NotConnected, number> = {
  busy: TIMINGS.busyMs,
  no_answer: TIMINGS.noAnswerMs,
  error: TIMINGS.errorMs,
};

/**
 * The built-in provider: plays a realistic call through telephony ingestion. A `to` ending
 * in 0001 is busy, 0002 does not answer, 0003 fails; any other number answers, talks (a
 * generated conversation with turns) and books. The call runs inside the dial job and lasts
 * a few seconds at SIMULATOR_SPEED=1 (well within the job lock, which BullMQ renews anyway);
 * everything reported is wall-clock true: answered_at, turn offsets, ended_at, duration.
 */
export class SimulatorProvider implements TelephonyProvider {
  readonly name = 'simulator';

  constructor(private readonly speed: number) {}

  providerCallId(callId: string): string {
    return `sim_${callId}`;
  }

  async dial(req: DialRequest, report: TelephonyReport): Promise<void> {
    const notConnected = MAGIC.find(([suffix]) => req.to.endsWith(suffix))?.[1];
    if (notConnected) {
      await this.wait(WAIT_BEFORE[notConnected]);
      await report(notConnectedMessage(req, notConnected, new Date()));
      return;
    }
    await this.wait(TIMINGS.answerMs);
    const answeredAt = new Date();
    const { started, ended } = answeredCall(
      {
        receptionistId: req.receptionistId,
        receptionistName: req.receptionistName,
        direction: 'outbound',
        businessPhone: req.from,
        customerPhone: req.to,
        customerName: req.customerName ?? undefined,
        startedAt: answeredAt,
        providerCallId: req.providerCallId,
      },
      'booked',
    );
    await report(started);

    // Play the script: each turn is said when its (scaled) time comes; record when it was.
    const sinceAnswer = () => Math.round((Date.now() - answeredAt.getTime()) / 100) / 10;
    const turns = [];
    for (const turn of ended.transcript?.turns ?? []) {
      await this.until(answeredAt, turn.offset_seconds);
      turns.push({ ...turn, offset_seconds: sinceAnswer() });
    }
    await this.until(answeredAt, ended.duration_seconds);
    const endedAt = new Date();
    const duration = Math.round((endedAt.getTime() - answeredAt.getTime()) / 1000);
    await report({
      ...ended,
      started_at: req.startedAt.toISOString(),
      answered_at: answeredAt.toISOString(),
      occurred_at: endedAt.toISOString(),
      duration_seconds: duration,
      transcript: { summary: ended.transcript?.summary ?? '', turns },
      ...(ended.recording ? { recording: { ...ended.recording, duration_seconds: duration } } : {}),
    });
  }

  async close(): Promise<void> {}

  private wait(ms: number): Promise<void> {
    return sleep(ms / this.speed);
  }

  /** Waits until `scriptSeconds` of the conversation have been played since `from`. */
  private async until(from: Date, scriptSeconds: number): Promise<void> {
    const due = from.getTime() + (scriptSeconds * TIMINGS.talkMsPerScriptSecond) / this.speed;
    const left = due - Date.now();
    if (left > 0) await sleep(left);
  }
}
