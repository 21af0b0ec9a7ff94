import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Client } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { progressBar } from '../lib/progress';

/** What `npm run bench:scale` seeds into the database before partitioning (migration 012). */
export interface ScaleSpec {
  deliveries: number;
  calls: number;
  /** Days the delivery history spans, ending now (deliveries, their events and attempts). */
  deliveryDays: number;
  /** Months the call history spans, ending now. */
  callMonths: number;
  /** Share of the calls held by the one big tenant (its list is walked to depth 1M). */
  bigTenantShare: number;
}

export const TENANTS = 10;
export const SUBSCRIPTION = (t: number): string =>
  `00000000-0000-4000-8000-${String(t).padStart(12, '0')}`;
const DAY = 86_400_000;
const esc = (s: string): string => s.replace(/\\/g, '\\\\').replace(/\t/g, '\\t');

/** Streams `count` rows from `row(i)` through COPY … FROM STDIN (text format), with a bar. */
async function copyRows(
  client: Client,
  label: string,
  table: string,
  columns: string[],
  count: number,
  row: (i: number) => (string | number | null)[],
): Promise<void> {
  const bar = progressBar(label.padEnd(28), count, 'rows');
  let i = 0;
  const chunk = 2_000;
  const source = new Readable({
    read() {
      if (i >= count) {
        this.push(null);
        return;
      }
      const lines: string[] = [];
      const end = Math.min(count, i + chunk);
      for (; i < end; i++) {
        lines.push(
          row(i)
            .map((v) => (v === null ? '\\N' : esc(String(v))))
            .join('\t'),
        );
      }
      bar.update(i);
      this.push(`${lines.join('\n')}\n`);
    },
  });
  const sink = client.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`));
  await pipeline(source, sink);
  bar.update(count);
  bar.stop();
}

/** TENANTS tenants (`ten_s<t>`), one receptionist and one webhook subscription each. */
export async function seedTenants(client: Client): Promise<void> {
  for (let t = 0; t < TENANTS; t++) {
    await client.query(
      `INSERT INTO tenants (id, name) VALUES ($1, $1);
       INSERT INTO receptionists (id, tenant_id, name, status, phone_number)
         VALUES ('rcp_s' || $2, $1, 'Desk', 'ready', '+1415555' || lpad($2, 4, '0'));
       INSERT INTO webhook_subscriptions (id, tenant_id, url, secret_ciphertext, secret_key_id)
         VALUES ($3, $1, 'https://127.0.0.1:9/hook', 'sealed', 'k0')`
        .replace(/\$1/g, `'ten_s${t}'`)
        .replace(/\$2/g, `'${t}'`)
        .replace(/\$3/g, `'${SUBSCRIPTION(t)}'`),
    );
  }
}

/**
 * Seeds the history: TENANTS tenants (one receptionist and one subscription each), for each
 * delivery one event and 1.2 attempts on average (every fifth delivery needed a retry), all
 * spread evenly over the last `deliveryDays` days; calls over `callMonths` months, the big
 * tenant (`ten_s0`) holding `bigTenantShare` of them.
 */
export async function seedScale(url: string, spec: ScaleSpec): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const now = Date.now();
    await seedTenants(client);
    const n = spec.deliveries;
    const at = (i: number) => new Date(now - ((n - i) / n) * spec.deliveryDays * DAY).toISOString();
    const tenantOf = (i: number) => i % TENANTS;
    await copyRows(
      client,
      'events',
      'events',
      [
        'id',
        'tenant_id',
        'receptionist_id',
        'type',
        'data',
        'created_at',
        'published_at',
        'fanned_out_at',
      ],
      n,
      (i) => [
        `evt_s${i}`,
        `ten_s${tenantOf(i)}`,
        `rcp_s${tenantOf(i)}`,
        'call.completed',
        `{"call_id":"call_s${i}","duration_seconds":${i % 600}}`,
        at(i),
        at(i),
        at(i),
      ],
    );
    await copyRows(
      client,
      'webhook_deliveries',
      'webhook_deliveries',
      [
        'id',
        'tenant_id',
        'event_id',
        'subscription_id',
        'status',
        'attempts',
        'last_status_code',
        'created_at',
        'updated_at',
        'completed_at',
        'first_success_at',
      ],
      n,
      (i) => {
        const a = at(i);
        return [
          `dlv_s${i}`,
          `ten_s${tenantOf(i)}`,
          `evt_s${i}`,
          SUBSCRIPTION(tenantOf(i)),
          'succeeded',
          i % 5 === 0 ? 2 : 1,
          200,
          a,
          a,
          a,
          a,
        ];
      },
    );
    const retried = Math.floor(n / 5) + (n % 5 ? 1 : 0);
    await copyRows(
      client,
      'webhook_delivery_attempts',
      'webhook_delivery_attempts',
      [
        'delivery_id',
        'round',
        'attempt',
        'status_code',
        'duration_ms',
        'response_excerpt',
        'attempted_at',
      ],
      n + retried,
      (k) => {
        // The first n rows are every delivery's last attempt; the rest the failed first tries.
        const i = k < n ? k : (k - n) * 5;
        const last = k < n;
        const attempt = last ? (i % 5 === 0 ? 2 : 1) : 1;
        return [
          `dlv_s${i}`,
          1,
          attempt,
          last ? 200 : 503,
          40 + (i % 50),
          last ? 'ok' : 'busy',
          at(i),
        ];
      },
    );
    const c = spec.calls;
    const big = Math.round(c * spec.bigTenantShare);
    const span = spec.callMonths * 30.44 * DAY;
    await copyRows(
      client,
      'calls',
      'calls',
      [
        'id',
        'tenant_id',
        'receptionist_id',
        'provider_call_id',
        'direction',
        'status',
        'from_number',
        'to_number',
        'duration_seconds',
        'started_at',
        'ended_at',
      ],
      c,
      (i) => {
        const t = i < big ? 0 : 1 + (i % (TENANTS - 1));
        const started = new Date(now - ((c - i) / c) * span).toISOString();
        return [
          `call_s${i}`,
          `ten_s${t}`,
          `rcp_s${t}`,
          `pc_s${i}`,
          'inbound',
          'completed',
          '+14155550101',
          '+14155550100',
          60 + (i % 300),
          started,
          started,
        ];
      },
    );
    await client.query('ANALYZE');
  } finally {
    await client.end();
  }
}
