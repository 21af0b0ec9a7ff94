import type { Request, Response } from 'express';
import type { VersionCondition } from '@switchboard/db';
import { ApiError, invalidParameter } from '../errors';

// Conditional edits (docs/API.md, Conditional edits;
// docs/decisions/0097-conditional-edits.md): a resource clients
// edit has a version, counted up by each of their changes; its ETag is `W/"<version>"`, and
// an edit with If-Match applies only while the version is one the header names.

/** The entity tag of a resource version: weak, as the version does not count every change. */
export const etagOf = (version: number): string => `W/"${version}"`;

/** One entity tag of a list, from where the scan stands; the opaque part captured. */
const ENTITY_TAG = /(?:W\/)?"([\x21\x23-\x7e\x80-\xff]*)"/y;
/** Separators of a list's elements: optional whitespace and commas (empty elements allowed). */
const SEPARATORS = /[ \t,]*/y;
/** An opaque tag that names one of our versions. */
const VERSION = /^[1-9][0-9]{0,9}$/;

const malformed = () =>
  invalidParameter(
    'If-Match',
    'If-Match must be * or a comma-separated list of entity tags, such as W/"3" from an ETag',
  );

/**
 * The request's If-Match as a version condition: null when absent or `*` (any version of an
 * existing resource; every conditional edit needs the resource anyway), else the versions
 * of the listed tags, compared weakly (`W/"3"` and `"3"` both name version 3). A tag that is
 * not one of ours names no version, so it matches nothing. A value that is not `*` nor a list
 * of entity tags (RFC 9110, section 13.1.1) is a 400.
 */
export function ifMatchOf(req: Request): VersionCondition {
  const value = req.headers['if-match'];
  if (value === undefined) return null;
  if (value.trim() === '*') return null;
  const versions: number[] = [];
  let tags = 0;
  let at = 0;
  for (;;) {
    SEPARATORS.lastIndex = at;
    SEPARATORS.exec(value);
    const comma = value.slice(at, SEPARATORS.lastIndex).includes(',');
    at = SEPARATORS.lastIndex;
    if (at >= value.length) break;
    // Every element after the first follows a comma.
    if (tags > 0 && !comma) throw malformed();
    ENTITY_TAG.lastIndex = at;
    const tag = ENTITY_TAG.exec(value);
    if (!tag) throw malformed();
    tags++;
    const opaque = tag[1] ?? '';
    if (VERSION.test(opaque)) versions.push(Number(opaque));
    at = ENTITY_TAG.lastIndex;
  }
  if (tags === 0) throw malformed();
  return versions;
}

/** 412: the resource is no longer at a version the If-Match named; its ETag says where it is. */
export const preconditionFailed = (current: number): ApiError =>
  new ApiError(
    412,
    'invalid_request_error',
    'precondition_failed',
    `If-Match does not match the current ETag ${etagOf(current)}: the resource changed since ` +
      'it was read. Read it again and reapply the change.',
    null,
    { ETag: etagOf(current) },
  );

/**
 * Answers one versioned resource with its ETag. Not through res.json: Express would answer a
 * matching If-None-Match with 304, and this tag does not change with what the service
 * records by itself (counters, last delivery times), so a 304 could hide such a change.
 */
export function sendVersioned(res: Response, version: number, body: unknown, status = 200): void {
  res.status(status).setHeader('ETag', etagOf(version));
  res.type('json').end(JSON.stringify(body));
}

/** The If-Match request header, as every conditional edit documents it. */
export const ifMatchHeaderDoc = {
  name: 'If-Match',
  description:
    'Apply only if the resource is still at this version: an ETag from a read or an earlier ' +
    'edit (weak tags match, as `W/"3"`), a list of them, or `*` (any version). Absent: the ' +
    'edit applies whatever the version. A mismatch is a 412 `precondition_failed` carrying ' +
    'the current ETag.',
  schema: { type: 'string', example: 'W/"3"' },
};

/** The ETag response header of an answer holding one versioned resource. */
export const etagHeaderDoc = {
  ETag: {
    description:
      'The version of the resource (`W/"<n>"`), for If-Match. It changes with every change ' +
      'clients make, not with what the service records by itself (counters, times)',
    schema: { type: 'string', example: 'W/"3"' },
  },
};

/** The 412 of a conditional edit, as its route documents it. */
export const PRECONDITION_FAILED_DOC =
  'precondition_failed: If-Match names no current version; the ETag header carries the ' +
  'current one';
