/**
 * EBCDIC code pages 037 (US/Canada) and 500 (International). iconv-lite has no EBCDIC tables, and mainframe
 * exports still arrive as .txt; both are single-byte, so a 256-entry table each is the whole codec.
 * Generated from CPython's cp037 codec; cp500 differs from it in seven positions.
 */
const CP037 = "\u0000\u0001\u0002\u0003\u009c\t\u0086\u007f\u0097\u008d\u008e\u000b\f\r\u000e\u000f\u0010\u0011\u0012\u0013\u009d\u0085\b\u0087\u0018\u0019\u0092\u008f\u001c\u001d\u001e\u001f\u0080\u0081\u0082\u0083\u0084\n\u0017\u001b\u0088\u0089\u008a\u008b\u008c\u0005\u0006\u0007\u0090\u0091\u0016\u0093\u0094\u0095\u0096\u0004\u0098\u0099\u009a\u009b\u0014\u0015\u009e\u001a \u00a0\u00e2\u00e4\u00e0\u00e1\u00e3\u00e5\u00e7\u00f1\u00a2.<(+|&\u00e9\u00ea\u00eb\u00e8\u00ed\u00ee\u00ef\u00ec\u00df!$*);\u00ac-/\u00c2\u00c4\u00c0\u00c1\u00c3\u00c5\u00c7\u00d1\u00a6,%_>?\u00f8\u00c9\u00ca\u00cb\u00c8\u00cd\u00ce\u00cf\u00cc`:#@'=\"\u00d8abcdefghi\u00ab\u00bb\u00f0\u00fd\u00fe\u00b1\u00b0jklmnopqr\u00aa\u00ba\u00e6\u00b8\u00c6\u00a4\u00b5~stuvwxyz\u00a1\u00bf\u00d0\u00dd\u00de\u00ae^\u00a3\u00a5\u00b7\u00a9\u00a7\u00b6\u00bc\u00bd\u00be[]\u00af\u00a8\u00b4\u00d7{ABCDEFGHI\u00ad\u00f4\u00f6\u00f2\u00f3\u00f5}JKLMNOPQR\u00b9\u00fb\u00fc\u00f9\u00fa\u00ff\\\u00f7STUVWXYZ\u00b2\u00d4\u00d6\u00d2\u00d3\u00d50123456789\u00b3\u00db\u00dc\u00d9\u00da\u009f";

const CP500_DIFF: [number, string][] = [
  [0x4a, '['], [0x4f, '!'], [0x5a, ']'], [0x5f, '^'], [0xb0, '\u00a2'], [0xba, '\u00ac'], [0xbb, '|'],
];

const CP500 = (() => {
  const chars = [...CP037];
  for (const [byte, ch] of CP500_DIFF) chars[byte] = ch;
  return chars.join('');
})();

export type EbcdicCodePage = 'cp037' | 'cp500';

/** Decodes EBCDIC bytes; NEL (0x15) and LF (0x25) both become "\n". */
export function decodeEbcdic(bytes: Uint8Array, codePage: EbcdicCodePage): string {
  const table = codePage === 'cp037' ? CP037 : CP500;
  const parts: string[] = [];
  const step = 8192;
  for (let i = 0; i < bytes.length; i += step) {
    let s = '';
    const end = Math.min(bytes.length, i + step);
    for (let j = i; j < end; j++) s += table[bytes[j]!];
    parts.push(s);
  }
  return parts.join('').replace(/\u0085/g, '\n');
}

/**
 * EBCDIC text looks nothing like ASCII: 0x40 is the space, letters live in 0x81–0xE9, and the ASCII letter range
 * 0x61–0x7A holds only punctuation. Those three facts together are a strong signal.
 */
export function looksLikeEbcdic(bytes: Uint8Array): boolean {
  if (bytes.length < 16) return false;
  let space = 0;
  let letters = 0;
  let asciiLower = 0;
  let low = 0;
  for (const b of bytes) {
    if (b === 0x40) space++;
    else if ((b >= 0x81 && b <= 0xa9) || (b >= 0xc1 && b <= 0xe9)) letters++;
    else if (b >= 0x61 && b <= 0x7a) asciiLower++;
    else if (b < 0x40 && b !== 0x05 && b !== 0x0d && b !== 0x15 && b !== 0x25) low++;
  }
  const n = bytes.length;
  return space / n > 0.08 && letters / n > 0.4 && asciiLower / n < 0.1 && low / n < 0.02;
}
