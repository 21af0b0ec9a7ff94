import { defineConfig } from 'vite';

// The page is served by the API at /portal (docs/API.md, Tenant portal): assets under
// /portal/assets, no inline script or style (the page's Content-Security-Policy forbids them).
export default defineConfig({
  base: '/portal/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2020',
  },
});
