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
);
