import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const NO_KNEX_DEFAULT =
  'A Knex parameter has no default: the caller passes the pool or its open transaction, first.';

/**
 * The forms the one transaction idiom replaced: a store built over a transaction
 * (`new LeadsStore(trx)`; stores come from createStores), and a Knex parameter that defaults
 * to the pool (`db: Knex = this.db`), which hides a pool read inside an open transaction.
 * (`IdempotencyStore` is the API's Redis store, not a table's: it is not one of them.)
 */
const TRANSACTION_IDIOM = [
  {
    selector:
      'NewExpression[callee.name=/^(?!Idempotency)[A-Za-z]+Store$|^(Sms|Campaign|Delivery|Subscription|Provisioning|LeadImport|Call)Lifecycle$/]',
    message:
      'Stores are built once, by createStores(knex) (packages/db): use deps.stores and pass the transaction first.',
  },
  {
    selector: "AssignmentPattern[left.typeAnnotation.typeAnnotation.typeName.name='Knex']",
    message: NO_KNEX_DEFAULT,
  },
  {
    selector:
      "AssignmentPattern[right.type='MemberExpression'][right.object.type='ThisExpression'][right.property.name=/^(db|knex)$/]",
    message: NO_KNEX_DEFAULT,
  },
];

/**
 * A wall-clock bound in a test (`expect(Date.now() - started).toBeLessThan(5000)`) fails on a
 * busy machine without any defect. In `npm test` a duration is compared with a baseline
 * measured in the same run (`boundMs(budget, baseline)` of test/support/timing.ts, or another
 * measured duration), or the test asserts an order of events instead; fixed bounds belong to
 * the chaos parts (docs/decisions/0089-suite-without-wall-clock-bounds.md). Flagged: an
 * `expect` of a duration (a value computed from `Date.now()` or `performance.now()`, or named
 * like one: ms, elapsedMs, duration_ms, took, latency...) against a bare number or constant
 * (`5000`, `BOUND_MS`, `REDIS_DEADLINE_MS + 1500`). A bound that calls a function or reads a
 * variable (`boundMs(1000, baseline)`, `Math.ceil(elapsed)`) is not, nor one a test checks only
 * under `npm run chaos:quick` (`if (JUDGE_...)`, SWITCHBOARD_CHAOS=1).
 */
const DURATION_NAME = '/^(ms|took|waited)$|[a-z]Ms$|_ms$|[Ee]lapsed|[Dd]uration|[Ll]atenc/';
/** An instant: `t2 - t1` and `endedAt - startedAt` are durations. */
const INSTANT_NAME = '/^t[0-9]+$|[a-z]At$|_at$/';
const DURATION = [
  `[callee.object.arguments.0.type='Identifier'][callee.object.arguments.0.name=${DURATION_NAME}]`,
  `[callee.object.arguments.0.type='MemberExpression'][callee.object.arguments.0.property.name=${DURATION_NAME}]`,
  "[callee.object.arguments.0.left.callee.property.name='now']",
  "[callee.object.arguments.0.left.left.callee.property.name='now']",
  `[callee.object.arguments.0.operator='-'][callee.object.arguments.0.left.name=${INSTANT_NAME}]`,
];
const BARE_BOUND =
  'Literal, Identifier[name=/^[A-Z][A-Z0-9_]*$/], BinaryExpression:not(:has(CallExpression, MemberExpression, Identifier[name=/[a-z]/]))';
/** A bound judged only under SWITCHBOARD_CHAOS=1: `if (JUDGE_RATE) expect(...)...`. */
const CHAOS_ONLY = 'IfStatement[test.name=/^JUDGE_/] *';
const TIME_BOUND = [
  {
    // Time left until a deadline, against a bare figure: `expect(endsAt - Date.now())`.
    selector: `CallExpression[callee.property.name=/^toBeGreaterThan(OrEqual)?$/][callee.object.callee.name='expect'][callee.object.arguments.0.right.callee.property.name='now']:not(${CHAOS_ONLY}) > :matches(${BARE_BOUND})`,
    message:
      'No wall-clock bound in npm test: compare the instant with ones taken before and after the request instead.',
  },
  {
    // A latency or percentile compared outside an expect: `{ fast: p50 < 1000 }`.
    selector: `BinaryExpression[operator=/^<=?$/][left.name=/^p[0-9]+$|${DURATION_NAME.slice(1, -1)}/]:not(${CHAOS_ONLY}):not(IfStatement > BinaryExpression, WhileStatement > BinaryExpression, ForStatement > BinaryExpression) > :matches(${BARE_BOUND}).right`,
    message:
      'No wall-clock bound in npm test: compare with a baseline of the same run (boundMs of test/support/timing.ts), assert an order of events, or move the bound to test/chaos (npm run chaos:quick).',
  },
  {
    selector: `CallExpression[callee.property.name=/^toBeLessThan(OrEqual)?$/][callee.object.callee.name='expect']:matches(${DURATION.join(', ')}):not(${CHAOS_ONLY}) > :matches(${BARE_BOUND})`,
    message:
      'No wall-clock bound in npm test: compare with a baseline of the same run (boundMs of test/support/timing.ts), assert an order of events, or move the bound to test/chaos (npm run chaos:quick).',
  },
];

/** Tests add jobs through the job catalog, never by a queue's or job's name spelled out. */
const JOB_CATALOG = {
  selector:
    "CallExpression[callee.property.name=/^(add|addBulk)$/][callee.object.object.name='queues'], CallExpression[callee.property.name=/^(add|addBulk)$/][callee.object.object.property.name='queues']",
  message:
    'Add test jobs through the job catalog: addJob() from test/support/jobs.ts, or enqueue().',
};

/** A store's or lifecycle's method takes the transaction (or pool) it runs on first. */
const STORE_METHOD = {
  selector:
    "MethodDefinition > FunctionExpression > Identifier.params[typeAnnotation.typeAnnotation.typeName.name='Knex']:not(:first-child)",
  message: 'A store method takes the transaction (or pool) it runs on as its first argument.',
};

export default tseslint.config(
  {
    // packages/sdk/src/generated: made by `npm run sdk:generate`, checked by a test, not edited.
    ignores: [
      '**/node_modules/**',
      'coverage/**',
      '**/dist/**',
      '.tools/**',
      'bench/.results/**',
      'packages/sdk/src/generated/**',
      // The portal's build output (npm run portal:build).
      'apps/portal/dist/**',
      'test-output/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
    },
  },
  {
    // One transaction idiom (docs/code-layout.md, "Transactions and stores"): stores are built
    // once, by createStores(knex) in packages/db, and take the transaction they run in first.
    files: ['apps/*/src/**/*.ts', 'packages/*/src/**/*.ts'],
    ignores: ['packages/db/src/stores/create-stores.ts'],
    rules: { 'no-restricted-syntax': ['error', ...TRANSACTION_IDIOM] },
  },
  {
    // A store's or lifecycle's method takes the transaction (or pool) it runs on first.
    files: ['packages/db/src/stores/**/*.ts'],
    ignores: ['packages/db/src/stores/create-stores.ts'],
    rules: {
      'no-restricted-syntax': ['error', ...TRANSACTION_IDIOM, STORE_METHOD],
    },
  },
  {
    // A migration's frozen code (packages/db/src/migrations/frozen) is what that migration
    // runs, unchanged once released: live code has its own and never imports it.
    files: ['packages/*/src/**/*.ts'],
    ignores: ['packages/db/src/migrations/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '/migrations/frozen(/|$)',
              message: "A migration's frozen code is its own: live code does not import it.",
            },
          ],
        },
      ],
    },
  },
  {
    // Tests add jobs through the job catalog (test/support/jobs.ts, or `enqueue`), never by a
    // queue's or job's name spelled out: a renamed job would otherwise strand them silently.
    files: ['test/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', JOB_CATALOG, ...TIME_BOUND] },
  },
  {
    // The chaos parts hold the suite's wall-clock bounds (npm run chaos:quick).
    files: ['test/chaos/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', JOB_CATALOG] },
  },
  {
    // Unit tests beside the code: no wall-clock bound either (each keeps its folder's rules).
    files: ['apps/*/src/**/*.test.ts', 'packages/*/src/**/*.test.ts'],
    rules: { 'no-restricted-syntax': ['error', ...TRANSACTION_IDIOM, ...TIME_BOUND] },
  },
  {
    files: ['packages/db/src/stores/**/*.test.ts'],
    rules: { 'no-restricted-syntax': ['error', ...TRANSACTION_IDIOM, STORE_METHOD, ...TIME_BOUND] },
  },
  {
    // Layering of the API (docs/code-layout.md, "Where code lives"): a feature reaches what it
    // shares with others through `shared/`, `http/`, `openapi/`... (`../../x`), never another
    // feature's folder (`../<feature>/x`). MCP is the exception: it is a second transport over
    // the use cases of the other features.
    files: ['apps/api/src/features/*/**/*.ts'],
    ignores: ['apps/api/src/features/mcp/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./(?!\\.\\./)',
              message:
                "A feature does not import another feature's folder: move what both use to apps/api/src/shared.",
            },
          ],
        },
      ],
    },
  },
  {
    // What the features share never depends on a feature.
    files: ['apps/api/src/{shared,http,openapi,pagination,idempotency}/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '/features(/|$)',
              message: 'Shared API code does not import a feature.',
            },
          ],
        },
      ],
    },
  },
);
