import { normalizePhone } from '@switchboard/phone';
import { ImportFileError, mapHeader } from './csv';
import { parseRow } from './rows';

describe('CSV rows', () => {
  it('normalises phones written as people write them, refusing numbers without country code', () => {
    expect(normalizePhone('+1 (415) 555-0123')).toBe('+14155550123');
    expect(normalizePhone('0044 20 7946 0958')).toBe('+442079460958');
    expect(normalizePhone('+1.415.555.0123')).toBe('+14155550123');
    expect(normalizePhone('415-555-0123')).toBeNull();
    expect(normalizePhone('+1 415')).toBeNull();
    expect(normalizePhone('call me')).toBeNull();
  });

  it('maps a header case-insensitively; other columns are metadata; refuses unusable ones', () => {
    const map = mapHeader([' Name ', 'PHONE', 'Company', '', 'tags']);
    expect(map.known).toEqual([
      { index: 0, field: 'name' },
      { index: 1, field: 'phone' },
      { index: 4, field: 'tags' },
    ]);
    expect(map.metadata).toEqual([{ index: 2, key: 'Company' }]);
    for (const bad of [
      ['name', 'company'],
      ['phone', 'Phone'],
      ['Dana', '+14155550123'],
    ]) {
      expect(() => mapHeader(bad)).toThrow(ImportFileError);
    }
    const wide = ['email', ...Array.from({ length: 21 }, (_, i) => `c${i}`)];
    expect(() => mapHeader(wide)).toThrow(/At most 20 columns/);
  });

  it('turns a record into fields, or into an error naming the field', () => {
    const cols = mapHeader(['name', 'phone', 'email', 'status', 'tags', 'Company']);
    expect(
      parseRow([' Dana ', '+1 415 555 0123', '', 'Qualified', 'a; b;;a', 'Acme'], cols, 1),
    ).toEqual({
      row: 1,
      ok: true,
      key: '+14155550123',
      fields: {
        name: 'Dana',
        phone: '+14155550123',
        status: 'qualified',
        tags: ['a', 'b'],
        metadata: { Company: 'Acme' },
      },
    });
    expect(parseRow(['Kim', '', 'Kim@Example.com'], cols, 2)).toMatchObject({
      ok: true,
      key: 'email:kim@example.com',
    });
    const err = (record: string[]) => {
      const r = parseRow(record, cols, 3);
      return r.ok ? null : r.error;
    };
    expect(err(['x', '555-0123'])?.field).toBe('phone');
    expect(err(['x', '', 'nope'])?.field).toBe('email');
    expect(err(['x', '+14155550123', '', 'hot'])?.field).toBe('status');
    expect(err(['x', '', ''])?.message).toBe('A row needs a phone or an email (or both)');
    expect(err(['x', '+14155550123', '', '', '', '', 'extra'])?.field).toBeNull();
    expect(err(['a\u0000b', '+14155550123'])?.field).toBe('name');
  });
});
