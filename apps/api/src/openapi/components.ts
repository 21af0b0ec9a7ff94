/**
 * Named schemas. A schema that carries a JSON Schema `title` (`Receptionist`, `CallDetail`)
 * is the component of that name: the document shows it once under `components.schemas` and
 * refers to it everywhere else, so the reference page and the generated SDK types name it.
 * Untitled schemas are inlined. Two different schemas with one title are a programming
 * error, caught when the document is built (at start-up and in every test).
 */
export class SchemaComponents {
  private readonly schemas = new Map<string, object>();
  private readonly serialized = new Map<string, string>();

  /** Registers `schema` under `name` (once) and returns a `$ref` to it. */
  ref(name: string, schema: object): { $ref: string } {
    const text = JSON.stringify(schema);
    const known = this.serialized.get(name);
    if (known === undefined) {
      this.serialized.set(name, text);
      this.schemas.set(name, this.inline(schema, true) as object);
    } else if (known !== text) {
      throw new Error(`two different schemas are both titled "${name}"`);
    }
    return { $ref: `#/components/schemas/${encodeURIComponent(name)}` };
  }

  /**
   * A copy of `schema` for the document, every titled subschema replaced by its `$ref`.
   * `root` keeps the outermost schema itself (the definition of a component).
   */
  inline(schema: unknown, root = false): unknown {
    if (Array.isArray(schema)) return schema.map((s) => this.inline(s));
    if (schema === null || typeof schema !== 'object') return schema;
    const title = (schema as { title?: unknown }).title;
    if (!root && typeof title === 'string') return this.ref(title, schema);
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(schema)) {
      // `enum`, `const`, `examples` and `default` hold values, never schemas.
      out[key] = ['enum', 'const', 'examples', 'default'].includes(key)
        ? value
        : this.inline(value);
    }
    return out;
  }

  /** Every component so far, sorted by name. */
  all(): Record<string, object> {
    return Object.fromEntries([...this.schemas.entries()].sort(([a], [b]) => a.localeCompare(b)));
  }
}
