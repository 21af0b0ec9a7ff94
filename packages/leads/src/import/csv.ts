import { parse, type Parser } from 'csv-parse';
import { LEAD_METADATA_KEYS_MAX, METADATA_KEY_MAX, RESERVED_METADATA_KEYS } from '../schema';

/**
 * The one CSV dialect of lead imports, used both when a file is uploaded (to count its rows
 * and check its header) and when it is imported, so both see the same rows: comma-separated,
 * RFC 4180 quoting (quoted fields may hold commas, quotes and newlines), a UTF-8 BOM ignored,
 * CRLF or LF. Stray quotes inside unquoted fields are kept as text, rows may have fewer or
 * more fields than the header (checked per row), and lines with nothing but separators are
 * not rows. A record longer than MAX_RECORD_BYTES stops the parse: no lead is that long.
 */
export const MAX_RECORD_BYTES = 128 * 1024;

export const csvParser = (): Parser =>
  parse({
    bom: true,
    relax_quotes: true,
    relax_column_count: true,
    skip_empty_lines: true,
    skip_records_with_empty_values: true,
    max_record_size: MAX_RECORD_BYTES,
  });

/** The columns the import knows; any other column goes to the lead's metadata. */
export const KNOWN_COLUMNS = ['name', 'phone', 'email', 'status', 'notes', 'tags'] as const;
export type KnownColumn = (typeof KNOWN_COLUMNS)[number];

export interface ColumnMap {
  /** Field count of the header row. */
  width: number;
  known: Array<{ index: number; field: KnownColumn }>;
  metadata: Array<{ index: number; key: string }>;
}

/** A file that cannot be imported at all (the API answers 400 or 413, never 202). */
export class ImportFileError extends Error {
  constructor(
    readonly kind: 'empty' | 'header' | 'no_rows' | 'malformed' | 'too_large',
    message: string,
  ) {
    super(message);
    this.name = 'ImportFileError';
  }
}

const isKnown = (name: string): name is KnownColumn =>
  (KNOWN_COLUMNS as readonly string[]).includes(name);

/**
 * Reads the header row: column names are matched case-insensitively and trimmed; empty names
 * are ignored. Usable means it names a phone or an email column (a lead needs one of them),
 * with no name twice and at most LEAD_METADATA_KEYS_MAX other columns.
 */
export function mapHeader(header: readonly string[]): ColumnMap {
  const map: ColumnMap = { width: header.length, known: [], metadata: [] };
  const seen = new Set<string>();
  header.forEach((raw, index) => {
    const name = raw.trim();
    if (name === '') return;
    const lower = name.toLowerCase();
    if (seen.has(lower)) {
      throw new ImportFileError('header', `The header names the column "${name}" twice`);
    }
    seen.add(lower);
    if (isKnown(lower)) map.known.push({ index, field: lower });
    else map.metadata.push({ index, key: metadataKey(name, index) });
  });
  if (!map.known.some((c) => c.field === 'phone' || c.field === 'email')) {
    throw new ImportFileError(
      'header',
      `The first row must be a header naming a phone or an email column (known columns: ${KNOWN_COLUMNS.join(', ')}; others go to metadata)`,
    );
  }
  if (map.metadata.length > LEAD_METADATA_KEYS_MAX) {
    throw new ImportFileError(
      'header',
      `At most ${LEAD_METADATA_KEYS_MAX} columns besides ${KNOWN_COLUMNS.join(', ')} (they become metadata)`,
    );
  }
  return map;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A metadata column's name, which becomes a key of each lead's metadata: refused (the file is
 * a 400 at upload) unless it is storable text (no NUL, no lone surrogate), at most
 * METADATA_KEY_MAX characters and not a reserved key. The message names the column by its
 * position, never by the bad name itself (it is stored as the failure reason).
 */
function metadataKey(name: string, index: number): string {
  const column = `Column ${index + 1} of the header`;
  if (name.includes('\u0000') || LONE_SURROGATE.test(name)) {
    throw new ImportFileError('header', `${column} has a name with NUL or invalid characters`);
  }
  if ([...name].length > METADATA_KEY_MAX) {
    throw new ImportFileError(
      'header',
      `${column} has a name longer than ${METADATA_KEY_MAX} characters (other columns become metadata keys)`,
    );
  }
  if ((RESERVED_METADATA_KEYS as readonly string[]).includes(name)) {
    throw new ImportFileError('header', `${column} is named "${name}", which is reserved`);
  }
  return name;
}

/** A parser error, said in a way an uploader can act on. */
export function malformed(err: unknown): ImportFileError {
  const e = err as { code?: string; message?: string; lines?: number };
  const where = e.lines ? ` (near line ${e.lines})` : '';
  const what =
    e.code === 'CSV_MAX_RECORD_SIZE'
      ? `a row is longer than ${MAX_RECORD_BYTES / 1024} KiB`
      : e.code === 'CSV_QUOTE_NOT_CLOSED'
        ? 'a quoted field is never closed'
        : 'the file is not valid CSV';
  return new ImportFileError('malformed', `The CSV cannot be read: ${what}${where}`);
}
