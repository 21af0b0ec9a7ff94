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
      'NewExpression[callee.name=/^(?!Idempotency)[A-Za-z]+Store$|^(Sms|Campaign|Delivery)Lifecycle$|^ReceptionistProvisioning$/]',
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
    // One transaction idiom (ARCHITECTURE.md, "Transactions"): stores are built once, by
    // createStores(knex) in packages/db, and take the transaction they run in first.
    files: ['apps/*/src/**/*.ts', 'packages/*/src/**/*.ts'],
    ignores: ['packages/db/src/stores/create-stores.ts'],
    rules: { 'no-restricted-syntax': ['error', ...TRANSACTION_IDIOM] },
  },
  {
    // A store's or lifecycle's method takes the transaction (or pool) it runs on first.
    files: ['packages/db/src/stores/**/*.ts'],
    ignores: ['packages/db/src/stores/create-stores.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...TRANSACTION_IDIOM,
        {
          selector:
            "MethodDefinition > FunctionExpression > Identifier.params[typeAnnotation.typeAnnotation.typeName.name='Knex']:not(:first-child)",
          message:
            'A store method takes the transaction (or pool) it runs on as its first argument.',
        },
      ],
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
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "CallExpression[callee.property.name=/^(add|addBulk)$/][callee.object.object.name='queues'], CallExpression[callee.property.name=/^(add|addBulk)$/][callee.object.object.property.name='queues']",
          message:
            'Add test jobs through the job catalog: addJob() from test/support/jobs.ts, or enqueue().',
        },
      ],
    },
  },
  {
    // Layering of the API (ARCHITECTURE.md, "Where code lives"): a feature reaches what it shares
    // with others through `shared/`, `http/`, `openapi/`... (`../../x`), never another feature's
    // folder (`../<feature>/x`). MCP is the exception: it is a second transport over the use
    // cases of the other features.
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
