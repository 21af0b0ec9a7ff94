/**
 * Samples pg_stat_activity of the bench database every `intervalMs` while a phase runs: what
 * the worker's connections are doing (running, waiting on a lock, idle in a transaction…)
 * and which statements are in flight. A sampling profile of Postgres, from the outside.
 */
import { Client } from 'pg';

export interface PgSampleSummary {
  samples: number;
  /** Mean number of connections of the bench database per state/wait, busiest first. */
  states: { state: string; meanConnections: number }[];
  /** The statements seen active or waiting, by share of (connection × sample). */
  statements: { statement: string; meanConnections: number; waits: string }[];
}

interface Row {
  state: string | null;
  wait: string | null;
  query: string | null;
}

const normalise = (q: string): string =>
  q
    .replace(/\s+/g, ' ')
    .replace(/\$\d+/g, '?')
    .replace(/'[^']*'/g, "'…'")
    .slice(0, 110);

export class PgSampler {
  private client: Client | null = null;
  private timer: NodeJS.Timeout | null = null;
  private busy = false;
  private samples = 0;
  private states = new Map<string, number>();
  private statements = new Map<string, { n: number; waits: Map<string, number> }>();

  constructor(
    private readonly url: string,
    private readonly dbName: string,
    private readonly intervalMs = 100,
  ) {}

  async start(): Promise<void> {
    this.client = new Client({ connectionString: this.url });
    // The connection may be cut (the database dropped after Ctrl-C): never an unhandled error.
    this.client.on('error', () => undefined);
    await this.client.connect();
    this.timer = setInterval(() => void this.sample(), this.intervalMs);
  }

  private async sample(): Promise<void> {
    if (this.busy || !this.client) return;
    this.busy = true;
    try {
      const { rows } = await this.client.query<Row>(
        `SELECT state,
                CASE WHEN wait_event IS NULL THEN NULL ELSE wait_event_type || ':' || wait_event END AS wait,
                query
           FROM pg_stat_activity
          WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
        [this.dbName],
      );
      this.samples++;
      for (const r of rows) {
        const state = `${r.state ?? '?'}${r.wait && r.state !== 'idle' ? ` (${r.wait})` : ''}`;
        this.states.set(state, (this.states.get(state) ?? 0) + 1);
        if (r.state === 'active' || r.state === 'idle in transaction') {
          const key = `${r.state === 'active' ? '' : '[idle in trx after] '}${normalise(r.query ?? '')}`;
          const s = this.statements.get(key) ?? { n: 0, waits: new Map<string, number>() };
          s.n++;
          const w = r.wait ?? 'cpu';
          s.waits.set(w, (s.waits.get(w) ?? 0) + 1);
          this.statements.set(key, s);
        }
      }
    } catch {
      // A failed sample is skipped.
    } finally {
      this.busy = false;
    }
  }

  async stop(): Promise<PgSampleSummary> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    while (this.busy) await new Promise((r) => setTimeout(r, 10));
    await this.client?.end().catch(() => undefined);
    this.client = null;
    const n = Math.max(1, this.samples);
    const r = (v: number) => Number((v / n).toFixed(2));
    return {
      samples: this.samples,
      states: [...this.states]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 8)
        .map(([state, c]) => ({ state, meanConnections: r(c) })),
      statements: [...this.statements]
        .sort((a, b) => b[1].n - a[1].n)
        .slice(0, 10)
        .map(([statement, s]) => ({
          statement,
          meanConnections: r(s.n),
          waits: [...s.waits]
            .sort((a, b) => b[1] - a[1])
            .slice(0, 3)
            .map(([w, c]) => `${w} ${Math.round((100 * c) / s.n)}%`)
            .join(', '),
        })),
    };
  }
}
