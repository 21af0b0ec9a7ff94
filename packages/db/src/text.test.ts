import { toPgText } from './text';

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
