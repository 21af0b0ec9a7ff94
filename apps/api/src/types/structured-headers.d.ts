// structured-headers publishes its types through `exports` only, which this repository's
// `moduleResolution: node` does not read; its CommonJS build's types are the same API.
declare module 'structured-headers' {
  export * from 'structured-headers/cjs/index.cjs';
}
