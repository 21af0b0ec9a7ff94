import type { FromSchema } from 'json-schema-to-ts';
import type { TestDataDeletion } from '@switchboard/db';
import { enqueueFromRequest } from '@switchboard/queues';
import type { Deps } from '../../deps';
import { defineRoute, type RouteDef } from '../../openapi/route';
import { nullableTimestamp, timestamp } from '../../shared/schemas';

/** The 202 body of DELETE /test-data: the accepted request. */
export const testDataDeletionSchema = {
  title: 'TestDataDeletion',
  type: 'object',
  required: ['id', 'status', 'created_at', 'completed_at'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^tdd_' },
    status: {
      enum: ['running', 'completed'],
      description: 'running when accepted; `test_data.deleted` says when it completed',
    },
    created_at: timestamp,
    completed_at: nullableTimestamp,
  },
} as const;

const testDataDeletionExample: FromSchema<typeof testDataDeletionSchema> = {
  id: 'tdd_4Kp8sW2nR6vY1cX3',
  status: 'running',
  created_at: '2026-11-21T12:00:00.000Z',
  completed_at: null,
};

const render = (d: TestDataDeletion): FromSchema<typeof testDataDeletionSchema> => ({
  id: d.id,
  status: d.status,
  created_at: d.createdAt.toISOString(),
  completed_at: d.completedAt?.toISOString() ?? null,
});

/**
 * DELETE /test-data (docs/API.md, Test mode). Invariant: the request row is committed before
 * the 202 (TestDataDeletionLifecycle.request), then its job is added; a failure to add it
 * still answers 202, because the worker's reconciler adds the job of a deletion left running.
 */
export function testDataRoutes(deps: Deps): RouteDef[] {
  return [
    defineRoute({
      method: 'delete',
      path: '/test-data',
      operationId: 'deleteTestData',
      summary: "Wipe the account's test-mode data (accepted now, done by the worker)",
      description:
        'Removes the test-mode data that exists now: ended test-mode calls, test-mode events ' +
        'and their deliveries (calls still on the phone stay until the next wipe). Keys, ' +
        'receptionists and test-mode subscriptions are kept. When it is done, ' +
        '`test_data.deleted` (a test-mode event) is emitted. Live data is never touched; ' +
        'a live or a test-mode admin key may ask.',
      tag: 'Test mode',
      scope: 'admin',
      // No parameters; unknown query parameters are ignored, as everywhere.
      query: { type: 'object', properties: {} },
      responses: {
        202: {
          description: 'Accepted: the wipe runs in the background',
          schema: testDataDeletionSchema,
          example: testDataDeletionExample,
        },
      },
      handler: async (req, res) => {
        const deletion = await deps.stores.testDataDeletions.request(req.auth.tenantId);
        try {
          await enqueueFromRequest(deps.queues, deps.redis, 'testDataDeletions', {
            data: { v: 1, deletionId: deletion.id },
          });
        } catch (err) {
          deps.logger.warn(
            { err, deletionId: deletion.id },
            'test data job not added; the reconciler will add it',
          );
        }
        res.status(202).json(render(deletion));
      },
    }),
  ];
}
