import { lintOpenApi } from './openapi/lint';
import { servedOpenApiDocument } from './openapi/served-document';
import { lintWithSpectral } from './openapi/spectral';

// Lints the OpenAPI document createApi serves, with Redocly CLI (redocly.yaml) and Spectral
// CLI (.spectral.yaml). Exit 1 on any warning or error, as `npm test` does.
//
//   npm run lint:openapi
async function main(): Promise<void> {
  const document = await servedOpenApiDocument();
  const [redocly, [spectral = []]] = await Promise.all([
    lintOpenApi(document),
    lintWithSpectral(document),
  ]);
  const problems = [
    ...redocly.map((p) => ({ ...p, linter: 'redocly' })),
    ...spectral.map((p) => ({ ...p, linter: 'spectral' })),
  ];
  for (const p of problems) {
    process.stdout.write(`${p.linter} ${p.severity} ${p.ruleId} at ${p.location}: ${p.message}\n`);
  }
  process.stdout.write(`openapi lint: ${problems.length} problem(s)\n`);
  if (problems.length > 0) process.exit(1);
}

main().catch((err: unknown) => {
  process.stderr.write(`lint:openapi: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
