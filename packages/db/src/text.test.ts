import { toPgJson, toPgText } from './text';

describe('toPgText', () => {
  it('replaces NUL, invalid UTF-8 and lone surrogates with U+FFFD', () => {
    expect(toPgText('ok\u0000done')).toBe('ok\uFFFDdone');
    expect(toPgText(Buffer.from([0x6f, 0x6b, 0x00, 0xff, 0xc3]))).toBe('ok\uFFFD\uFFFD\uFFFD');
    expect(toPgText('a\uD83D')).toBe('a\uFFFD');
    expect(toPgText('\uDE00b')).toBe('\uFFFDb');
  });

  it('keeps everything else as it was', () => {
    const text = 'héllo 😀 \t\r\n\u0001 ✓';
    expect(toPgText(text)).toBe(text);
    expect(toPgText(Buffer.from(text, 'utf8'))).toBe(text);
  });
});

describe('toPgJson', () => {
  it('writes a value without NUL or lone surrogates as JSON.stringify does', () => {
    const headers = { 'content-type': 'text/plain; charset=utf-8', 'x-é': 'ä 😀 \\u0041' };
    expect(toPgJson(headers)).toBe(JSON.stringify(headers));
  });

  it('makes NUL and lone surrogates safe in keys and values, nested too', () => {
    const json = toPgJson({ 'k\u0000': 'a\u0000b', n: { 'x\uD83D': ['\uDE00', 1, null] } });
    expect(json).not.toMatch(/\\u(0000|d[89a-f])/i);
    expect(JSON.parse(json)).toEqual({
      'k\uFFFD': 'a\uFFFDb',
      n: { 'x\uFFFD': ['\uFFFD', 1, null] },
    });
  });
});
