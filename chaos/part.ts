/**
 * One named part of `npm run chaos` (docs/RELIABILITY.md): the fuzz campaign, or a fault
 * scenario (a worker killed, a private Postgres or Redis stopped, an API SIGTERMed, a dead
 * receiver). Each sets up what it needs, runs, and says how it went in figures; the runner
 * prints them as a table. A part's problems are broken rules, never slow figures.
 */
export interface ChaosPart {
  /** One line for the usage text and the table. */
  description: string;
  run(opts: PartOptions): Promise<PartResult>;
}

export interface PartOptions {
  /** Progress and diagnostics go to stderr; the table is the only stdout. */
  log(line: string): void;
}

export interface PartResult {
  /** Figures to print and to copy into docs/RELIABILITY.md, in order. */
  figures: Array<[string, string | number]>;
  /** What went wrong; empty when the part is green. */
  problems: string[];
}
