/**
 * Imported first by the entry point, so that on an old Node the import itself fails with
 * this message, before any code that needs a newer runtime runs. Written without syntax newer
 * than Node 14 understands, as is the rest of the build (tsup target node20). package.json's
 * `sideEffects` names this file, the SDK's only side effect: with `false` the build would drop
 * the bare import of it (test/ship/sdk-tree-shaking.test.ts).
 */
const versions = typeof process === 'object' && process && process.versions;
const node = versions && typeof versions.node === 'string' ? versions.node : '';
const major = Number(node.split('.')[0]);
if (node && major < 20) {
  throw new Error(
    `@switchboard/sdk needs Node.js 20 or newer; this is Node.js ${node}. ` +
      'Upgrade Node.js (https://nodejs.org) to use it.',
  );
}

export {};
