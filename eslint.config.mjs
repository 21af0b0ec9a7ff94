import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
