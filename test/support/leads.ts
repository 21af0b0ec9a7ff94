import { verifyWebhook } from '@switchboard/sdk';
import type { ReceivedRequest } from '../../packages/webhooks/src/testing/tls-receiver';

/** A delivered lead event, checked against its signature. */
export interface DeliveredLeadEvent {
  id: string;
  event: string;
  receptionist_id?: string;
  data: {
    lead_id: string;
    name: string | null;
    phone: string | null;
    email: string | null;
    source: string;
    status: string;
    created_at?: string;
    updated_at?: string;
    changed_fields?: string[];
  };
}

/** The lead events a receiver got on `path`, each verified with the subscription's secret. */
export function leadEvents(
  requests: readonly ReceivedRequest[],
  path: string,
  secret: string,
): DeliveredLeadEvent[] {
  return requests
    .filter((r) => r.path === path)
    .map((r) => {
      verifyWebhook(r.body, r.headers, secret);
      return JSON.parse(r.body) as DeliveredLeadEvent;
    })
    .filter((e) => e.event.startsWith('lead.'));
}

/** A CSV body from rows of cells (quoted when needed), CRLF line ends. */
export function csv(rows: ReadonlyArray<ReadonlyArray<string>>): string {
  const cell = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  return rows.map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n';
}
