/**
 * The pages a new user follows, in the order they read them: their examples must work as
 * written (test/ship/readme-examples.test.ts reads the examples, test/ship/runnable-examples
 * runs the shell ones). A new guide is added here once, for both.
 */
export const USER_DOCS: readonly string[] = [
  'README.md',
  'docs/getting-started.md',
  'docs/api-guide.md',
  'docs/webhooks.md',
  'docs/API.md',
  'packages/sdk/README.md',
];
