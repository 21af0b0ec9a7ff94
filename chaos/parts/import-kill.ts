import type { ChaosPart, PartResult } from '../part';
import { intEnv, secs } from '../harness/env';
import { startStack } from '../harness/stack';

export interface ImportKillOptions {
  /** Distinct leads in the file; REPEATS more rows repeat earlier phones with a new name. */
  rows: number;
  kills: number;
  log(line: string): void;
}

const REPEATS = 500;

interface ImportRow {
  status: string;
  processed_rows: number;
  total_rows: number | null;
  created: number;
  updated: number;
  duplicates: number;
  skipped: number;
}

/**
 * A lead import under SIGKILL: a CSV of `rows` leads (and 500 rows repeating earlier phones
 * many batches later) is imported while the worker is SIGKILLed `kills` times, evenly over
 * the rows, and started again each time. The import must finish with exact counts: every
 * lead once, every repeat a duplicate, one `lead.created` per lead; and it must resume (its
 * processed rows move again) soon after each restart.
 */
export async function runImportKill(opts: ImportKillOptions): Promise<PartResult> {
  const { rows, kills, log } = opts;
  const stack = await startStack({ routes: {} });
  try {
    const { ctx } = stack.servers;
    const { auth, tenantId } = await ctx.tenant(['write']);
    const phone = (i: number) => `+1718${String(1_000_000 + i).slice(-7)}`;
    const lines = ['name,phone'];
    for (let i = 0; i < rows; i++) lines.push(`Lead ${i},${phone(i)}`);
    for (let i = 0; i < REPEATS; i++) lines.push(`Lead ${i} renamed,${phone(i)}`);
    const res = await fetch(`${stack.api.baseUrl}/api/v1/leads/import`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'text/csv' },
      body: `${lines.join('\n')}\n`,
      signal: AbortSignal.timeout(60_000),
    });
    if (res.status !== 202) throw new Error(`import refused: ${res.status} ${await res.text()}`);
    const id = ((await res.json()) as { id: string }).id;
    const started = Date.now();
    const progress = async () =>
      (await ctx.deps.knex('lead_imports').where({ id }).first()) as ImportRow;
    const total = rows + REPEATS;
    const resumeMs: number[] = [];
    let killed = 0;
    for (let k = 1; k <= kills; k++) {
      const threshold = Math.floor((total * k) / (kills + 1));
      const deadline = Date.now() + 300_000;
      while ((await progress()).processed_rows < threshold && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      const at = await progress();
      if (at.status !== 'processing') {
        log(`  the import is ${at.status} at ${at.processed_rows} rows: no kill ${k}`);
        break;
      }
      await stack.worker.kill();
      killed++;
      const killedAt = Date.now();
      const before = (await progress()).processed_rows;
      log(`  SIGKILL ${k}/${kills} at ${before} of ${total} rows; restarting the worker`);
      stack.worker = await stack.startWorker();
      const ready = Date.now() - killedAt;
      const resumeDeadline = Date.now() + 120_000;
      let now = await progress();
      while (
        now.processed_rows <= before &&
        now.status === 'processing' &&
        Date.now() < resumeDeadline
      ) {
        await new Promise((r) => setTimeout(r, 50));
        now = await progress();
      }
      const resumed = now.processed_rows > before || now.status !== 'processing';
      resumeMs.push(resumed ? Date.now() - killedAt : Infinity);
      log(
        `  worker ready after ${secs(ready)}, the import moved again after ` +
          `${resumed ? secs(Date.now() - killedAt) : 'never'}`,
      );
    }
    const doneDeadline = Date.now() + 300_000;
    let done = await progress();
    while (!['completed', 'failed'].includes(done.status) && Date.now() < doneDeadline) {
      await new Promise((r) => setTimeout(r, 200));
      done = await progress();
    }
    const elapsed = Date.now() - started;
    const leads = (await ctx.deps
      .knex('leads')
      .where({ tenant_id: tenantId })
      .select(
        ctx.deps.knex.raw('count(*)::int AS n'),
        ctx.deps.knex.raw('count(DISTINCT phone)::int AS phones'),
        ctx.deps.knex.raw("count(*) FILTER (WHERE name LIKE '% renamed')::int AS renamed"),
      )) as Array<{ n: number; phones: number; renamed: number }>;
    const events = (await ctx.deps
      .knex('events')
      .where({ tenant_id: tenantId })
      .whereIn('type', ['lead.created', 'lead.updated'])
      .select(
        'type',
        ctx.deps.knex.raw('count(*)::int AS n'),
        ctx.deps.knex.raw("count(DISTINCT data->>'lead_id')::int AS leads"),
      )
      .groupBy('type')) as Array<{ type: string; n: number; leads: number }>;
    const l = leads[0] ?? { n: 0, phones: 0, renamed: 0 };
    const created = events.find((e) => e.type === 'lead.created') ?? { n: 0, leads: 0 };
    const updated = events.find((e) => e.type === 'lead.updated') ?? { n: 0, leads: 0 };
    const problems: string[] = [];
    const expect = (what: string, got: number, want: number) => {
      if (got !== want) problems.push(`${what}: ${got}, expected ${want}`);
    };
    expect('kills', killed, kills);
    if (done.status !== 'completed') problems.push(`the import ended ${done.status}`);
    expect('processed rows', done.processed_rows, total);
    expect('created', done.created, rows);
    expect('duplicates', done.duplicates, REPEATS);
    expect('leads stored', l.n, rows);
    expect('distinct phones', l.phones, rows);
    expect('leads renamed by the repeats', l.renamed, REPEATS);
    expect('lead.created events', created.n, rows);
    expect('lead.created events, distinct leads', created.leads, rows);
    expect('lead.updated events', updated.n, REPEATS);
    return {
      figures: [
        ['rows in the file', `${total} (${rows} leads, ${REPEATS} repeats of earlier phones)`],
        ['worker SIGKILLs', killed],
        ['import', `${done.status} in ${secs(elapsed)}`],
        [
          'processed / created / duplicates / updated / skipped',
          `${done.processed_rows} / ${done.created} / ${done.duplicates} / ${done.updated} / ${done.skipped}`,
        ],
        ['leads stored (distinct phones)', `${l.n} (${l.phones})`],
        ['lead.created / lead.updated events', `${created.n} / ${updated.n}`],
        [
          'import moving again after a kill',
          resumeMs.map((ms) => secs(ms)).join(', ') + ' (new process started included)',
        ],
      ],
      problems,
    };
  } finally {
    await stack.destroy();
  }
}

export const importKillPart: ChaosPart = {
  description: 'lead import of 20,500 rows, worker SIGKILLed twice: exact counts, no duplicate',
  run: ({ log }) =>
    runImportKill({
      rows: intEnv('CHAOS_IMPORT_ROWS', 20_000),
      kills: intEnv('CHAOS_IMPORT_KILLS', 2),
      log,
    }),
};
