import type {
  ApiErrorBody,
  CreatedWebhookSubscription,
  Event as EventEnvelope,
  EventTypeInfo,
  EventTypeList,
  PortalToken,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookRecovery,
  WebhookRotatedSecret,
  WebhookStats,
  WebhookSubscription,
  WebhookTestResult,
} from '@switchboard/sdk/types';

export type {
  CreatedWebhookSubscription,
  EventEnvelope,
  EventTypeInfo,
  PortalToken,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookRecovery,
  WebhookRotatedSecret,
  WebhookStats,
  WebhookSubscription,
  WebhookTestResult,
};

/** The delivery log's server-side filters (docs/API.md, Webhooks). */
export interface LogFilter {
  status?: string;
  event?: string;
  since?: string;
  until?: string;
}

/** The changeable fields of an endpoint (PATCH /webhooks/{id}). */
export interface EndpointChange {
  url?: string;
  events?: string[];
  description?: string | null;
  is_active?: boolean;
}

/** An answer of the API that is not a success, with its documented error body. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The ETag of each object an answer returned, kept beside it (the SDK's `etagOf` does the same). */
const etags = new WeakMap<object, string>();

/** The version of an endpoint as the page got it, to send back as If-Match. */
export const etagOf = (resource: object): string | undefined => etags.get(resource);

/** Where the session lives while the tab is open (never in localStorage). */
const KEY = 'switchboard.portal';

export const saveSession = (s: PortalToken): void => sessionStorage.setItem(KEY, JSON.stringify(s));
export const loadSession = (): PortalToken | null => {
  const raw = sessionStorage.getItem(KEY);
  return raw ? (JSON.parse(raw) as PortalToken) : null;
};
export const clearSession = (): void => sessionStorage.removeItem(KEY);

/**
 * The API's JSON routes, with the page's portal token (the same types as the SDK's). An
 * answer's ETag is kept beside its object (`etagOf`); `ifMatch` sends one back, so an edit
 * applies only to the version the page shows.
 */
async function call<T>(
  method: string,
  path: string,
  token: string | null,
  body?: object,
  ifMatch?: string,
) {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body) headers['Content-Type'] = 'application/json';
  if (ifMatch) headers['If-Match'] = ifMatch;
  let res: Response;
  try {
    res = await fetch(`/api/v1${path}`, {
      method,
      headers,
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch {
    throw new ApiFailure(0, 'network', 'The service could not be reached. Check your connection.');
  }
  if (res.status === 204) return undefined as T;
  const json = (await res.json().catch(() => null)) as unknown;
  if (!res.ok) {
    const error = (json as ApiErrorBody | null)?.error;
    throw new ApiFailure(res.status, error?.code ?? 'unknown', error?.message ?? res.statusText);
  }
  const etag = res.headers.get('ETag');
  if (etag && typeof json === 'object' && json !== null) etags.set(json, etag);
  return json as T;
}

interface Page<T> {
  data: T[];
  has_more: boolean;
  cursor: string | null;
}

const seg = encodeURIComponent;

export const exchange = (code: string) =>
  call<PortalToken>('POST', '/portal/exchange', null, { code });

export const api = (token: string) => ({
  listEndpoints: () => call<Page<WebhookSubscription>>('GET', '/webhooks?limit=100', token),
  getEndpoint: (id: string) => call<WebhookSubscription>('GET', `/webhooks/${seg(id)}`, token),
  createEndpoint: (body: { url: string; events?: string[]; description?: string | null }) =>
    call<CreatedWebhookSubscription>('POST', '/webhooks', token, body),
  deleteEndpoint: (id: string) => call<void>('DELETE', `/webhooks/${seg(id)}`, token),
  enableEndpoint: (id: string) =>
    call<WebhookSubscription>('POST', `/webhooks/${seg(id)}/enable`, token),
  testEndpoint: (id: string) => call<WebhookTestResult>('POST', `/webhooks/${seg(id)}/test`, token),
  stats: (id: string) => call<WebhookStats>('GET', `/webhooks/${seg(id)}/stats`, token),
  deliveries: (id: string, filter: LogFilter = {}) => {
    const q = new URLSearchParams({ limit: '50' });
    for (const [k, v] of Object.entries(filter)) if (v) q.set(k, v);
    return call<Page<WebhookDelivery>>('GET', `/webhooks/${seg(id)}/deliveries?${q}`, token);
  },
  delivery: (id: string, deliveryId: string) =>
    call<WebhookDeliveryDetail>('GET', `/webhooks/${seg(id)}/deliveries/${seg(deliveryId)}`, token),
  /** With the ETag of the endpoint as shown: a change made elsewhere since is a 412. */
  updateEndpoint: (id: string, body: EndpointChange, ifMatch?: string) =>
    call<WebhookSubscription>('PATCH', `/webhooks/${seg(id)}`, token, body, ifMatch),
  rotateSecret: (id: string, overlapSeconds: number) =>
    call<WebhookRotatedSecret>('POST', `/webhooks/${seg(id)}/rotate-secret`, token, {
      overlap_seconds: overlapSeconds,
    }),
  recover: (id: string, since: string) =>
    call<WebhookRecovery>('POST', `/webhooks/${seg(id)}/recover`, token, { since }),
  recovery: (id: string, recoveryId: string) =>
    call<WebhookRecovery>('GET', `/webhooks/${seg(id)}/recoveries/${seg(recoveryId)}`, token),
  eventTypes: () => call<EventTypeList>('GET', '/event-types', token),
  /** One event as its webhooks carry it: those delivered to an endpoint the link sees. */
  event: (eventId: string) => call<EventEnvelope>('GET', `/events/${seg(eventId)}`, token),
  retry: (id: string, deliveryId: string) =>
    call<WebhookDelivery>(
      'POST',
      `/webhooks/${seg(id)}/deliveries/${seg(deliveryId)}/retry`,
      token,
    ),
});

export type Api = ReturnType<typeof api>;
