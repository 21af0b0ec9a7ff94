import { useEffect, useRef, useState } from 'preact/hooks';
import type {
  LogFilter,
  WebhookDelivery,
  WebhookStats,
  WebhookSubscription,
  WebhookTestResult,
} from './api';
import type { PageProps } from './page-props';
import { HealthCharts } from './chart';
import { DeliveryLog } from './deliveries';
import { EditEndpoint } from './edit';
import { RecoverPanel } from './recover';
import { RotateSecret, RotateUnavailable } from './rotate';
import { StatusBadge } from './endpoints';
import { when } from './format';
import { useLoadFailure } from './load-state';
import { ErrorNote, Loading, NotFound } from './states';

/** One endpoint: its health, its actions (per capability) and its delivery log. */
export function EndpointPage(props: PageProps & { id: string }) {
  const { client, can, onFailure, id } = props;
  const [endpoint, setEndpoint] = useState<WebhookSubscription | null>(null);
  const [stats, setStats] = useState<WebhookStats | null>(null);
  const [log, setLog] = useState<WebhookDelivery[]>([]);
  const [filter, setFilter] = useState<LogFilter>({});
  const [test, setTest] = useState<WebhookTestResult | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const confirm = useRef<HTMLDialogElement>(null);

  const { missing, error, setError, fail } = useLoadFailure(onFailure, [404, 403]);
  const reload = () => {
    client.getEndpoint(id).then(setEndpoint, fail);
    client.stats(id).then(setStats, fail);
    client.deliveries(id, filter).then((p) => setLog(p.data), fail);
  };
  useEffect(reload, [id, client, filter]);

  const act = async (name: string, work: () => Promise<void>) => {
    setBusy(name);
    setError(null);
    try {
      await work();
    } catch (err) {
      fail(err);
    } finally {
      setBusy(null);
    }
  };

  if (missing) return <NotFound what="Endpoint" />;
  if (!endpoint) return <Loading error={error} />;
  return (
    <>
      <section aria-labelledby="ep-title">
        <p>
          <a href="#/">← All endpoints</a>
        </p>
        <h1 id="ep-title" class="url">
          {endpoint.url}
        </h1>
        <dl class="facts">
          <dt>Status</dt>
          <dd>
            <StatusBadge s={endpoint} />
          </dd>
          <dt>Events</dt>
          <dd>{endpoint.events.length ? endpoint.events.join(', ') : 'every event'}</dd>
          <dt>Last success</dt>
          <dd>{when(endpoint.last_success_at)}</dd>
          <dt>Last failure</dt>
          <dd>{when(endpoint.last_failure_at)}</dd>
          <dt>Failures in a row</dt>
          <dd>{endpoint.consecutive_failures}</dd>
          {endpoint.secret_overlap_ends_at && (
            <>
              <dt>Previous secret signs until</dt>
              <dd>{when(endpoint.secret_overlap_ends_at)}</dd>
            </>
          )}
          {endpoint.description && (
            <>
              <dt>Description</dt>
              <dd>{endpoint.description}</dd>
            </>
          )}
        </dl>
        {endpoint.failing && (
          <p class="warnline" data-testid="failing-note">
            Deliveries to this endpoint keep failing ({endpoint.consecutive_failures} in a row). If
            they go on failing, the endpoint is disabled and its waiting deliveries are cancelled.
            Fix the receiver, then recover what failed.
          </p>
        )}
        <ErrorNote message={error} />
        {can.manage && (
          <div class="actions">
            <button
              type="button"
              disabled={busy !== null}
              onClick={() => act('test', async () => setTest(await client.testEndpoint(id)))}
            >
              {busy === 'test' ? 'Sending…' : 'Send test event'}
            </button>
            {!endpoint.is_active && endpoint.disabled_reason !== 'manual' && (
              <button
                type="button"
                disabled={busy !== null}
                onClick={() =>
                  act('enable', async () => setEndpoint(await client.enableEndpoint(id)))
                }
              >
                Enable again
              </button>
            )}
            <button type="button" class="danger" onClick={() => confirm.current?.showModal()}>
              Delete endpoint
            </button>
          </div>
        )}
        {can.manage && <EditEndpoint {...props} endpoint={endpoint} onChanged={setEndpoint} />}
        {test && (
          <p role="status" class={test.delivered ? 'okline' : 'error'} data-testid="test-result">
            {test.delivered
              ? `Test delivered: HTTP ${test.status_code}.`
              : `Test not delivered: ${
                  test.status_code === null
                    ? (test.error ?? 'no response')
                    : `HTTP ${test.status_code}`
                }.`}
          </p>
        )}
        <dialog ref={confirm} aria-labelledby="confirm-title">
          <h2 id="confirm-title">Delete this endpoint?</h2>
          <p>
            It stops receiving events at once and its delivery log is deleted. This cannot be
            undone.
          </p>
          <div class="actions">
            <button type="button" onClick={() => confirm.current?.close()}>
              Keep it
            </button>
            <button
              type="button"
              class="danger"
              onClick={() =>
                act('delete', async () => {
                  await client.deleteEndpoint(id);
                  confirm.current?.close();
                  location.hash = '#/';
                })
              }
            >
              Yes, delete it
            </button>
          </div>
        </dialog>
      </section>
      {can.secrets ? (
        <RotateSecret
          {...props}
          endpointId={id}
          onRotated={() => client.getEndpoint(id).then(setEndpoint, fail)}
        />
      ) : (
        <RotateUnavailable />
      )}
      <section aria-labelledby="health-title">
        <h2 id="health-title">Health</h2>
        {stats ? <HealthCharts stats={stats} /> : <p>Loading…</p>}
      </section>
      {can.recover && <RecoverPanel {...props} endpointId={id} onProgress={reload} />}
      <DeliveryLog {...props} endpointId={id} rows={log} onReload={reload} onFilter={setFilter} />
    </>
  );
}
