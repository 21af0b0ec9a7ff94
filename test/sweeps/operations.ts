import type { Express } from 'express';
import request from 'supertest';
import type { Scope } from '@switchboard/db';
import { dereferenced } from '../support/openapi-doc';

/** One parameter of an operation, as the served document declares it. */
export interface Param {
  name: string;
  required: boolean;
  schema: JsonSchema;
}

/** The subset of JSON Schema the document uses (see arbitraries.ts). */
export type JsonSchema = Record<string, unknown>;

/**
 * One operation of the served OpenAPI document, dereferenced: what the sweeps need to build
 * requests for it. Nothing here is written by hand, so an operation added to the API is in
 * every sweep the day it is declared.
 */
export interface Operation {
  operationId: string;
  method: string;
  /** The OpenAPI path, e.g. `/webhooks/{id}/deliveries/{delivery_id}/retry`. */
  path: string;
  /** `x-required-scope`; null for an operation without authentication. */
  scope: Scope | null;
  /** `x-portal-capability`: what a portal token needs here; null: no portal token. */
  portal: string | null;
  pathParams: Param[];
  query: Param[];
  headers: Param[];
  body: { contentType: string; schema: JsonSchema; example: unknown } | null;
  /** Documented statuses. */
  statuses: Set<number>;
  /** Whether its answer is an event stream (`text/event-stream`), which never ends. */
  streams: boolean;
}

export interface OpenApiDoc {
  paths: Record<string, Record<string, Record<string, unknown>>>;
  components: { schemas: Record<string, JsonSchema> };
}

interface RawParam {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema?: JsonSchema;
}

/** GET /api/v1/openapi.json from the app itself, and its operations. */
export async function servedOperations(
  app: Express,
): Promise<{ doc: OpenApiDoc; operations: Operation[] }> {
  const res = await request(app).get('/api/v1/openapi.json').expect(200);
  const doc = res.body as OpenApiDoc;
  const flat = dereferenced(doc);
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(flat.paths)) {
    for (const [method, raw] of Object.entries(item)) {
      const op = raw as {
        operationId: string;
        'x-required-scope'?: Scope;
        'x-portal-capability'?: string;
        parameters?: RawParam[];
        requestBody?: { content: Record<string, { schema?: JsonSchema; example?: unknown }> };
        responses: Record<string, { content?: Record<string, unknown> }>;
      };
      const params = (where: RawParam['in']): Param[] =>
        (op.parameters ?? [])
          .filter((p) => p.in === where)
          .map((p) => ({ name: p.name, required: Boolean(p.required), schema: p.schema ?? {} }));
      const [contentType, media] = Object.entries(op.requestBody?.content ?? {})[0] ?? [];
      operations.push({
        operationId: op.operationId,
        method,
        path,
        scope: op['x-required-scope'] ?? null,
        portal: op['x-portal-capability'] ?? null,
        pathParams: params('path'),
        query: params('query'),
        headers: params('header'),
        body: contentType
          ? { contentType, schema: media?.schema ?? {}, example: media?.example }
          : null,
        statuses: new Set(Object.keys(op.responses).map(Number)),
        streams: Object.values(op.responses).some(
          (r) => r.content?.['text/event-stream'] !== undefined,
        ),
      });
    }
  }
  return { doc, operations };
}

/** `/leads/{id}` with `{id: 'lead_1'}` → `/api/v1/leads/lead_1` (values are encoded). */
export function fillPath(op: Operation, values: Record<string, string>): string {
  return `/api/v1${op.path.replace(/\{([^}]+)\}/g, (_m, name: string) =>
    encodeURIComponent(values[name] ?? ''),
  )}`;
}

/** A label for reports: `getLead (GET /leads/{id})`. */
export const label = (op: Operation): string =>
  `${op.operationId} (${op.method.toUpperCase()} ${op.path})`;
