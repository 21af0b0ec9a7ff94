import type { Request } from 'express';
import { ApiError } from '../errors';
import { etagOf, ifMatchOf } from './if-match';

const withIfMatch = (value?: string) =>
  ({ headers: value === undefined ? {} : { 'if-match': value } }) as unknown as Request;

describe('If-Match', () => {
  it.each([
    ['absent', undefined, null],
    ['*', '*', null],
    ['* with spaces', ' * ', null],
    ['a weak tag of ours', 'W/"3"', [3]],
    ['a strong tag of ours (compared weakly)', '"3"', [3]],
    ['a list', 'W/"3", "4" ,W/"12"', [3, 4, 12]],
    ['a list with empty elements', ', W/"3",, "5",', [3, 5]],
    ['a tag that is not ours: matches nothing', '"nope"', []],
    ['a quoted comma in a tag not ours', '"a,b", W/"2"', [2]],
    ['an empty tag', '""', []],
    ['zero is no version', 'W/"0"', []],
    ['a leading zero is no version', 'W/"03"', []],
  ])('%s', (_name, value, expected) => {
    expect(ifMatchOf(withIfMatch(value))).toEqual(expected);
  });

  it.each([
    ['unquoted', 'nope'],
    ['empty', ''],
    ['only commas', ' , ,'],
    ['two tags without a comma', 'W/"1" W/"2"'],
    ['* in a list', '*, W/"1"'],
    ['lower-case weak prefix', 'w/"1"'],
    ['an unterminated tag', '"3'],
    ['a space in a tag', '"a b"'],
  ])('%s is a 400 on If-Match', (_name, value) => {
    let thrown: unknown;
    try {
      ifMatchOf(withIfMatch(value));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect(thrown).toMatchObject({ status: 400, code: 'invalid_parameter', param: 'If-Match' });
  });

  it('an ETag is the weak tag of the version', () => {
    expect(etagOf(7)).toBe('W/"7"');
    expect(ifMatchOf(withIfMatch(etagOf(7)))).toEqual([7]);
  });
});
