import { sleep } from '../lib/progress';
import { startNodeChild, type NodeChild } from './children';
import { isFromReceiver, type FromReceiver, type PhaseStats, type Receipt } from './protocol';

/** The receiver child process and its IPC questions (stats, drain traced receipts). */
export class ReceiverClient {
  private nextId = 1;
  private waiting = new Map<number, (m: FromReceiver) => void>();

  private constructor(
    readonly child: NodeChild,
    readonly port: number,
  ) {
    child.proc.on('message', (m: unknown) => {
      if (!isFromReceiver(m) || !('id' in m)) return;
      const done = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      done?.(m);
    });
  }

  static async start(env: NodeJS.ProcessEnv, timeoutMs = 30_000): Promise<ReceiverClient> {
    const child = startNodeChild('receiver', 'bench/delivery/receiver.ts', { env, ipc: true });
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`receiver not ready within ${timeoutMs / 1000} s:\n${child.tail()}`)),
        timeoutMs,
      );
      child.proc.on('message', (m: unknown) => {
        if (isFromReceiver(m) && m.kind === 'ready') {
          clearTimeout(timer);
          resolve(m.port);
        }
      });
      void child.exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`receiver exited (${code}):\n${child.tail()}`));
      });
    });
    return new ReceiverClient(child, port);
  }

  private ask(kind: 'stats' | 'drain', timeoutMs = 10_000): Promise<FromReceiver> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`receiver did not answer ${kind} within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.waiting.set(id, (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      this.child.proc.send({ id, kind });
    });
  }

  async stats(): Promise<{ phases: Record<string, PhaseStats>; cpuMs: number }> {
    const m = await this.ask('stats');
    if (m.kind !== 'stats') throw new Error('unexpected receiver answer');
    return { phases: m.phases, cpuMs: m.cpuMs };
  }

  async phase(name: string): Promise<PhaseStats> {
    return (await this.stats()).phases[name] ?? { count: 0, distinct: 0, first: 0, last: 0 };
  }

  async drain(): Promise<Receipt[]> {
    const m = await this.ask('drain');
    if (m.kind !== 'records') throw new Error('unexpected receiver answer');
    return m.records;
  }

  /** Polls until `done(stats)` or the deadline; `tick` runs once per poll (progress). */
  async waitFor(
    phase: string,
    done: (s: PhaseStats) => boolean,
    opts: { timeoutMs: number; pollMs?: number; tick?: (s: PhaseStats) => void },
  ): Promise<PhaseStats> {
    const deadline = Date.now() + opts.timeoutMs;
    let died = false;
    void this.child.exited.then(() => {
      died = true;
    });
    for (;;) {
      const s = await this.phase(phase);
      opts.tick?.(s);
      if (done(s)) return s;
      if (died) throw new Error(`receiver exited:\n${this.child.tail()}`);
      if (Date.now() > deadline) return s;
      await sleep(opts.pollMs ?? 250);
    }
  }
}
