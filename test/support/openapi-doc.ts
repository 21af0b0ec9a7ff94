/**
 * The document with every `#/components/...` reference replaced by what it points at, so a
 * test can look into schemas that the document names once and refers to elsewhere.
 */
export function dereferenced<T extends object>(doc: T): T {
  const resolve = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(resolve);
    if (node === null || typeof node !== 'object') return node;
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/')) {
      const target = ref
        .slice(2)
        .split('/')
        .reduce<unknown>(
          (at, key) => (at as Record<string, unknown>)[decodeURIComponent(key)],
          doc,
        );
      return resolve(target);
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, resolve(v)]));
  };
  return resolve(doc) as T;
}
