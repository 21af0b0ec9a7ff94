/** Characters no text field accepts: NUL (U+0000) and lone UTF-16 surrogates. */
const NUL = '\u0000';
const LONE_SURROGATE = /\p{Surrogate}/u;

export type BadTextReason = 'nul' | 'surrogate';

/** Where bad text was found: the path of the value, or of the object whose key holds it. */
export interface BadText {
  path: string[];
  inKey: boolean;
  reason: BadTextReason;
}

/** A value still to visit, linked to its parent so that a path is built only when needed. */
interface Node {
  value: unknown;
  key: string | null;
  parent: Node | null;
}

/** Deeper paths are cut to their first segments: a `param` stays short whatever the body. */
const MAX_PATH = 16;

const pathOf = (node: Node): string[] => {
  const path: string[] = [];
  for (let n: Node | null = node; n?.key != null; n = n.parent) path.push(n.key);
  return path.reverse().slice(0, MAX_PATH);
};

const reasonOf = (s: string): BadTextReason | null => {
  if (s.includes(NUL)) return 'nul';
  return LONE_SURROGATE.test(s) ? 'surrogate' : null;
};

/**
 * Finds the first string or object key of a parsed JSON value that cannot be stored as text:
 * one holding NUL, which Postgres refuses in `text` and `jsonb`, or a lone surrogate (JSON can
 * spell `\ud800`; it is no character), which `jsonb` refuses and `text` would silently turn
 * into U+FFFD. Either way a late refusal would be a 500. Iterative with parent links, so
 * however deeply a body nests, the work stays linear in its size (which the body limit
 * bounds) and the call stack flat.
 */
export function findBadText(value: unknown): BadText | null {
  const stack: Node[] = [{ value, key: null, parent: null }];
  while (stack.length) {
    const node = stack.pop() as Node;
    const v = node.value;
    if (typeof v === 'string') {
      const reason = reasonOf(v);
      if (reason) return { path: pathOf(node), inKey: false, reason };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push({ value: v[i], key: String(i), parent: node });
      }
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      for (const [key] of entries) {
        const reason = reasonOf(key);
        if (reason) return { path: pathOf(node), inKey: true, reason };
      }
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, inner] = entries[i] as [string, unknown];
        stack.push({ value: inner, key, parent: node });
      }
    }
  }
  return null;
}
