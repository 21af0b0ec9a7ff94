import { safeSmsText, smsKeyword, smsSegments } from './text';

describe('smsSegments', () => {
  it.each([
    ['empty', '', 'GSM-7', 0, 1],
    ['one GSM-7 character', 'a', 'GSM-7', 1, 1],
    ['160 GSM-7 characters: one segment', 'a'.repeat(160), 'GSM-7', 160, 1],
    ['161: split, 153 per part', 'a'.repeat(161), 'GSM-7', 161, 2],
    ['306 = 2 × 153', 'a'.repeat(306), 'GSM-7', 306, 2],
    ['307', 'a'.repeat(307), 'GSM-7', 307, 3],
    ['accents of the GSM alphabet stay GSM-7', 'Café à 5 € ñ ü Ç'.padEnd(20, '.'), 'GSM-7', 21, 1],
    ['1600 GSM-7 characters', 'x'.repeat(1600), 'GSM-7', 1600, 11],
  ])('%s', (_name, text, encoding, units, segments) => {
    expect(smsSegments(text)).toEqual({ encoding, units, segments });
  });

  it('GSM-7 extension characters count double', () => {
    for (const c of ['€', '{', '}', '[', ']', '~', '|', '^', '\\', '\f']) {
      expect(smsSegments(c)).toEqual({ encoding: 'GSM-7', units: 2, segments: 1 });
    }
    expect(smsSegments('{'.repeat(80)).segments).toBe(1);
    expect(smsSegments('{'.repeat(81))).toEqual({ encoding: 'GSM-7', units: 162, segments: 2 });
  });

  it('never splits an escape pair across parts', () => {
    // 152 plain septets then '{' (2 septets): the pair does not fit in part one's last slot.
    const text = 'a'.repeat(152) + '{' + 'a'.repeat(10);
    expect(smsSegments(text)).toEqual({ encoding: 'GSM-7', units: 164, segments: 2 });
    // 306 septets would fit in two parts, but the pair at 153-154 pushes one septet over.
    const tight = 'a'.repeat(152) + '{' + 'a'.repeat(152);
    expect(smsSegments(tight)).toEqual({ encoding: 'GSM-7', units: 306, segments: 3 });
  });

  it('non-Latin text is UCS-2 at 70 per message, 67 per part', () => {
    expect(smsSegments('Привет'.repeat(11))).toEqual({ encoding: 'UCS-2', units: 66, segments: 1 });
    expect(smsSegments('Привет'.repeat(12))).toEqual({ encoding: 'UCS-2', units: 72, segments: 2 });
    expect(smsSegments('你好'.repeat(35))).toEqual({ encoding: 'UCS-2', units: 70, segments: 1 });
    expect(smsSegments('你'.repeat(134)).segments).toBe(2);
    expect(smsSegments('你'.repeat(135)).segments).toBe(3);
    expect(smsSegments('مرحبا').encoding).toBe('UCS-2');
  });

  it('one character outside the GSM alphabet makes the whole message UCS-2', () => {
    expect(smsSegments('a'.repeat(69) + 'ç')).toEqual({
      encoding: 'UCS-2',
      units: 70,
      segments: 1,
    });
    expect(smsSegments('a'.repeat(70) + 'ç').segments).toBe(2);
    // In UCS-2 a GSM extension character is one code unit like any other.
    expect(smsSegments('€ç')).toEqual({ encoding: 'UCS-2', units: 2, segments: 1 });
  });

  it('emoji take two UTF-16 code units and are never split', () => {
    expect(smsSegments('😀')).toEqual({ encoding: 'UCS-2', units: 2, segments: 1 });
    expect(smsSegments('😀'.repeat(35))).toEqual({ encoding: 'UCS-2', units: 70, segments: 1 });
    expect(smsSegments('😀'.repeat(36)).segments).toBe(2);
    // 33 emoji fill 66 units of a 67-unit part; the 34th starts the next part.
    expect(smsSegments('😀'.repeat(66)).segments).toBe(2);
    expect(smsSegments('😀'.repeat(67)).segments).toBe(3);
    // A ZWJ family: 7 code points, 11 code units.
    expect(smsSegments('👨‍👩‍👧‍👦')).toEqual({ encoding: 'UCS-2', units: 11, segments: 1 });
  });
});

describe('smsKeyword', () => {
  it.each([
    'STOP',
    'stop',
    'Stop',
    ' STOP ',
    '\nstop\r\n',
    '\tQuit',
    'STOPALL',
    'unsubscribe',
    'Cancel',
    'END',
    'quit',
    'STOP.',
    'STOP!',
    'stop!!!',
    'Stop...',
    '"STOP"',
    "'stop'",
    '\u201CStop\u201D',
    '"STOP."',
    '"STOP".',
    'ST\u200BOP',
    '\u200BSTOP\uFEFF',
    '\u00A0STOP\u00A0',
    'STOP\u200D!',
  ])('%j opts out', (text) => expect(smsKeyword(text)).toBe('opt_out'));
  it.each(['START', 'start', ' Unstop\n', 'YES', 'yes'])('%j opts in', (text) =>
    expect(smsKeyword(text)).toBe('opt_in'),
  );
  it.each([
    'STOP please',
    'please stop',
    'S T O P',
    'ſtop',
    '',
    'yes!',
    '"yes"',
    'STOP?',
    '"STOP',
    'STOP,',
    '.STOP',
    '!',
    '""',
    'stopp',
    'STOP STOP',
  ])('%j is an ordinary message', (text) => expect(smsKeyword(text)).toBeNull());
});

describe('safeSmsText', () => {
  it('removes NUL and replaces unpaired surrogates', () => {
    expect(safeSmsText('ST\u0000OP\u0000')).toBe('STOP');
    expect(safeSmsText('a\uD800b')).toBe('a\uFFFDb');
    expect(safeSmsText('a\uDC00')).toBe('a\uFFFD');
    expect(safeSmsText('ok 😀 Привет')).toBe('ok 😀 Привет');
  });
});
