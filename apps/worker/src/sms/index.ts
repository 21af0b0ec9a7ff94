import type { Component } from '../component';
import type { WorkerDeps } from '../deps';
import { reconcileTimings, type ReconcileOptions } from '../reconcile';
import { startQueueWorker, type QueueTimings } from '../queue-worker';
import { SmsOutcomeHooks, type SmsOutcomeHook } from './outcome-hooks';
import type { SmsProvider } from './provider';
import { startSmsReconciler } from './reconciler';
import { sendProcessor } from './send';
import {
  SimulatorSmsProvider,
  simulatorReceiptProcessor,
  type SimulatorSmsOptions,
} from './simulator';

export type { SmsProvider, SmsRequest, SmsSendResult } from './provider';
export type { SmsOutcomeHook } from './outcome-hooks';
export { SimulatorSmsProvider, simulatorHandoffs, type SimulatorSmsOptions } from './simulator';

export interface SmsSenderOptions extends QueueTimings, ReconcileOptions {
  /** How long a message may stay claimed (`sending`) before it is failed as interrupted. */
  staleSendingMs?: number;
  /**
   * Live messages' carrier; defaults to the simulator. Test-mode messages always go to the
   * simulator.
   */
  provider?: SmsProvider;
  /** Options of that default simulator (tests: a fixed receipt delay). */
  simulator?: SimulatorSmsOptions;
}

/** The SMS sender as other domains of the worker see it. */
export interface SmsSender extends Component {
  /** `hook` runs in the transaction of every send outcome (sent or failed). */
  onOutcome(hook: SmsOutcomeHook): void;
  /**
   * Sends a committed queued message now, in this process, when the in-process budget has
   * room and the sender is not closing (false otherwise: its send job sends it); a send it
   * accepted is over before `close` resolves. Its send job stays the fallback either way
   * (the claim makes whichever comes second a no-op). The returned promise never rejects.
   */
  trySendNow(smsId: string): boolean;
}

/**
 * The SMS sender: a worker on the sms queue driving an SmsProvider, the reconciler that
 * releases scheduled messages, re-enqueues queued messages whose job is missing and fails
 * sends a dead worker left behind, and (with the simulator) the worker that applies the
 * simulated carrier's due receipts. One component, so the runner starts and drains it with a
 * single line. Owners of messages (campaigns) register outcome hooks before the runner
 * yields, so no outcome is recorded without them.
 */
export function startSmsSender(deps: WorkerDeps, opts: SmsSenderOptions = {}): SmsSender {
  const simulator = new SimulatorSmsProvider(
    deps.config.simulatorSpeed,
    deps.redis,
    deps.config.queuePrefix,
    deps.queues,
    opts.simulator,
  );
  const provider = opts.provider ?? simulator;
  const staleSendingMs = opts.staleSendingMs ?? 120_000;
  const hooks = new SmsOutcomeHooks();
  const send = sendProcessor(deps, provider, hooks, { staleSendingMs, simulator });
  // In-process sends at once, beside the queue worker's own concurrency.
  const inlineBudget = Math.max(1, Math.floor(deps.config.workerConcurrency / 2));
  const inFlight = new Set<Promise<void>>();
  /**
   * Set when close begins: a send offered after it goes to its job (another worker, or this
   * one's successor), never to a process whose connections are about to close. A campaign's
   * pump closes beside this sender, and its last message used to start here after close had
   * taken the list of sends to wait for: cut off mid-send, it stayed `sending` until the
   * reconciler failed it as interrupted.
   */
  let closing = false;
  const worker = startQueueWorker(deps, 'sms', send, {
    ...opts,
    concurrency: deps.config.workerConcurrency,
  });
  // The simulated carrier's receipts, due in Redis (any worker applies them, this one or the
  // next after a restart). Always started: test-mode messages go to the simulator whatever
  // carrier live ones use.
  const receipts = startQueueWorker(deps, 'smsSimulatorReceipts', simulatorReceiptProcessor(deps), {
    ...opts,
    concurrency: deps.config.workerConcurrency,
  });
  const reconciler = startSmsReconciler(deps, hooks, { ...reconcileTimings(opts), staleSendingMs });
  return {
    name: 'sms',
    onOutcome: (hook) => hooks.register(hook),
    trySendNow(smsId) {
      if (closing || inFlight.size >= inlineBudget) return false;
      const run = send({ v: 1, smsId })
        .catch((err: unknown) => {
          deps.logger.warn({ err, smsId }, 'in-process send failed; its job will send it');
        })
        .finally(() => inFlight.delete(run));
      inFlight.add(run);
      return true;
    },
    async close() {
      closing = true;
      await Promise.all([worker.close(), reconciler.close(), receipts.close(), ...inFlight]);
      await Promise.all([provider.close(), provider === simulator ? null : simulator.close()]);
    },
  };
}
