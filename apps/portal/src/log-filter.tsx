import type { LogFilter } from './api';

/** `datetime-local` gives local wall time; the API wants an instant. */
const toIso = (local: string): string | undefined =>
  local ? new Date(local).toISOString() : undefined;

/** The delivery log's filters, applied by the API (status, event, time window). */
export function LogFilterForm({ onApply }: { onApply: (f: LogFilter) => void }) {
  const submit = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const text = (k: string) => String(form.get(k) ?? '').trim();
    onApply({
      status: text('status') || undefined,
      event: text('event') || undefined,
      since: toIso(text('since')),
      until: toIso(text('until')),
    });
  };
  return (
    <form class="filters" onSubmit={submit} aria-label="Filter deliveries">
      <label>
        Status
        <select name="status" id="status-filter">
          <option value="">all</option>
          <option value="succeeded">succeeded</option>
          <option value="failed">failed</option>
          <option value="pending">pending</option>
          <option value="cancelled">cancelled</option>
        </select>
      </label>
      <label>
        Event
        <input name="event" id="event-filter" placeholder="call.completed" />
      </label>
      <label>
        From
        <input name="since" id="since-filter" type="datetime-local" />
      </label>
      <label>
        Until
        <input name="until" id="until-filter" type="datetime-local" />
      </label>
      <button type="submit">Apply filters</button>
    </form>
  );
}
