import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Finds, in source text, the UPDATEs that set given columns of given tables: raw SQL
 * (`UPDATE <table> [alias] SET <column> = …`) and knex builders (`db(<table>)…update({
 * <column>: … })`). It reads text, not a syntax tree: what it cannot see (a SET built by a
 * helper, a builder from another function) it reports as unseen, so that a person decides.
 */

/** A state column set by an UPDATE, or an UPDATE of a guarded table that hides its SET. */
export interface StateUpdate {
  file: string;
  line: number;
  /** `?`: a knex update whose builder is not in sight. */
  table: string;
  /** The guarded columns it sets; empty when its SET is not visible here (`unseen`). */
  columns: string[];
  form: 'sql' | 'knex' | 'unseen';
}

/** The files under `dirs` (relative to `root`) that `keep` accepts, recursively. */
export function sourceFiles(root: string, dirs: string[], keep: (rel: string) => boolean) {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name === 'dist') continue;
      const path = join(dir, name);
      const rel = relative(root, path);
      if (statSync(path).isDirectory()) walk(path);
      else if (keep(rel)) out.push(rel);
    }
  };
  for (const dir of dirs) walk(join(root, dir));
  return out.sort();
}

const lineOf = (text: string, index: number) => text.slice(0, index).split('\n').length;

/** The text from `open` (an opening parenthesis) to its matching close, exclusive. */
function balanced(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return text.slice(open + 1, i);
  }
  return text.slice(open + 1);
}

/** A SET clause: from `start` to WHERE, FROM, RETURNING at depth 0, a backtick or `;`. */
function setClause(text: string, start: number): string {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '`' || c === ';' || depth < 0) return text.slice(start, i);
    else if (depth === 0 && /^(WHERE|FROM|RETURNING)\b/.test(text.slice(i, i + 10))) {
      return text.slice(start, i);
    }
  }
  return text.slice(start);
}

const assigned = (set: string, columns: string[]) =>
  columns.filter((c) => new RegExp(`(?<![.\\w])${c}\\s*=(?![=>])`).test(set));

const keyed = (object: string, columns: string[]) =>
  columns.filter((c) => new RegExp(`(?<![.\\w])['"]?${c}['"]?\\s*:`).test(object));

/** What an `.update(<name>)` writes: the object literals assigned to or merged into `name`. */
function objectsOf(text: string, name: string): string {
  const parts: string[] = [];
  const forms = [
    new RegExp(`\\b${name}\\b[^=;\\n]*=\\s*\\{`, 'g'),
    new RegExp(`Object\\.assign\\(\\s*${name}\\s*,\\s*\\{`, 'g'),
  ];
  for (const form of forms) {
    for (const m of text.matchAll(form)) {
      const brace = m.index + m[0].length - 1;
      parts.push(
        balanced(
          text.replace(/[{}]/g, (b) => (b === '{' ? '(' : ')')),
          brace,
        ),
      );
    }
  }
  for (const m of text.matchAll(new RegExp(`\\b${name}\\.(\\w+)\\s*=(?!=)`, 'g'))) {
    parts.push(`${m[1]}: x`);
  }
  return parts.join('\n');
}

/** Every update in `text` (the file `file`) that sets a column `guarded` names for its table. */
export function stateUpdates(
  file: string,
  text: string,
  guarded: Record<string, readonly string[]>,
): StateUpdate[] {
  const found: StateUpdate[] = [];
  const constants = new Map<string, string>();
  for (const m of text.matchAll(/\bconst\s+([A-Z_]+)\s*=\s*'([a-z_]+)'/g)) {
    constants.set(m[1] as string, m[2] as string);
  }

  // Raw SQL. `UPDATE` in capitals: SQL here is written so, prose is not.
  for (const m of text.matchAll(/\bUPDATE\s+(?:ONLY\s+)?([a-z_]+)\b(?:\s+(?:AS\s+)?(\w+))?/g)) {
    const table = m[1] as string;
    const columns = guarded[table];
    if (!columns) continue;
    const line = lineOf(text, m.index);
    const afterTable = m.index + m[0].length - (m[2] === 'SET' ? 3 : 0);
    const rest = text.slice(afterTable);
    const set = /^\s*SET\b/.exec(rest);
    if (!set) {
      found.push({ file, line, table, columns: [], form: 'unseen' });
      continue;
    }
    const hit = assigned(setClause(text, afterTable + set[0].length), [...columns]);
    if (hit.length) found.push({ file, line, table, columns: hit, form: 'sql' });
  }

  // Knex builders: `.update(` with a guarded key, on the table of the nearest builder before it.
  for (const m of text.matchAll(/\.update\(/g)) {
    const arg = balanced(text, m.index + m[0].length - 1).trim();
    const written = /^\w+$/.test(arg) ? objectsOf(text, arg) : arg;
    const before = text.slice(Math.max(0, m.index - 600), m.index);
    const roots = [...before.matchAll(/\w\(\s*(?:'([a-z_]+)'|([A-Z_]+))\s*\)/g)];
    const root = roots.at(-1);
    const table = root ? (root[1] ?? constants.get(root[2] as string)) : constants.get('TABLE');
    const line = lineOf(text, m.index);
    if (table === undefined) {
      // No table in sight: reported as `?` when it sets a column guarded on any table.
      const hit = keyed(written, [...new Set(Object.values(guarded).flat())]);
      if (hit.length) found.push({ file, line, table: '?', columns: hit, form: 'knex' });
      continue;
    }
    const columns = guarded[table];
    const hit = columns ? keyed(written, [...columns]) : [];
    if (hit.length) found.push({ file, line, table, columns: hit, form: 'knex' });
  }
  return found;
}
