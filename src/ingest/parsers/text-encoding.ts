/**
 * Text encoding detection for plain-text uploads, shared by the TXT parser and the type sniffer.
 *
 * Order matters: a BOM is authoritative; UTF-16 without a BOM shows as zero bytes on one parity; valid UTF-8 is
 * almost never an accident; EBCDIC has its own byte shape; everything else is a legacy code page, chosen by
 * decoding with each plausible candidate and scoring how much the result looks like natural text (chardet's
 * statistics alone mislabel short Cyrillic files and know nothing of cp866 or MacCyrillic).
 */
import chardet from 'chardet';
import iconv from 'iconv-lite';
import { decodeEbcdic, looksLikeEbcdic } from './ebcdic.js';

export interface DecodedText {
  text: string;
  encoding: string;
}

/** How much of the file the detectors look at; decoding always covers the whole file. */
const SAMPLE_BYTES = 64 * 1024;

/** Above this share of control characters (NULs included) a file is binary, whatever its name says. */
const MAX_CONTROL_RATIO = 0.05;

/** Single-byte code pages worth trying for European and Cyrillic text. */
const SINGLE_BYTE_CANDIDATES = [
  'windows-1252',
  'iso-8859-1',
  'iso-8859-15',
  'windows-1250',
  'iso-8859-2',
  'windows-1251',
  'koi8-r',
  'koi8-u',
  'cp866',
  'maccyrillic',
  'iso-8859-5',
  'windows-1253',
  'iso-8859-7',
  'windows-1254',
  'windows-1257',
  'windows-1255',
  'windows-1256',
  'windows-874',
];

/** chardet names its multi-byte findings with these; their structure makes a confident match reliable. */
const MULTI_BYTE = new Set(['Shift_JIS', 'Big5', 'GB18030', 'EUC-JP', 'EUC-KR']);

/**
 * Detects the encoding of `bytes` and decodes them. Returns null when the bytes are binary, not text.
 * With `partial`, `bytes` is only the head of a file (it may end mid-character).
 */
export function decodeText(bytes: Uint8Array, options: { partial?: boolean } = {}): DecodedText | null {
  const partial = options.partial ?? false;
  if (bytes.length === 0) return { text: '', encoding: 'utf-8' };

  const bom = fromBom(bytes);
  const decoded = bom ?? detect(bytes, partial);
  if (decoded === null) return null;
  if (isBinary(decoded.text)) return null;
  return { text: normalizeNewlines(decoded.text), encoding: decoded.encoding };
}

function fromBom(bytes: Uint8Array): DecodedText | null {
  const [b0, b1, b2, b3] = bytes;
  if (b0 === 0xef && b1 === 0xbb && b2 === 0xbf) {
    return { text: new TextDecoder('utf-8').decode(bytes.subarray(3)), encoding: 'utf-8' };
  }
  if (b0 === 0xff && b1 === 0xfe && b2 === 0 && b3 === 0) {
    return { text: iconv.decode(Buffer.from(bytes.subarray(4)), 'utf-32le'), encoding: 'utf-32le' };
  }
  if (b0 === 0 && b1 === 0 && b2 === 0xfe && b3 === 0xff) {
    return { text: iconv.decode(Buffer.from(bytes.subarray(4)), 'utf-32be'), encoding: 'utf-32be' };
  }
  if (b0 === 0xff && b1 === 0xfe) {
    return { text: new TextDecoder('utf-16le').decode(bytes.subarray(2)), encoding: 'utf-16le' };
  }
  if (b0 === 0xfe && b1 === 0xff) {
    return { text: new TextDecoder('utf-16be').decode(bytes.subarray(2)), encoding: 'utf-16be' };
  }
  return null;
}

function detect(bytes: Uint8Array, partial: boolean): DecodedText | null {
  const sample = bytes.subarray(0, SAMPLE_BYTES);

  const utf16 = utf16Parity(sample) ?? utf16HighBytes(sample) ?? utf16Cjk(sample);
  if (utf16 !== null) {
    const even = bytes.length % 2 === 0 ? bytes : bytes.subarray(0, bytes.length - 1);
    return { text: new TextDecoder(utf16).decode(even), encoding: utf16 };
  }
  // NULs outside UTF-16 mean binary (heap dumps, images, executables renamed .txt).
  if (nulRatio(sample) > 0.001) return null;

  const utf8 = decodeUtf8(bytes, partial);
  if (utf8 !== null) return { text: utf8, encoding: 'utf-8' };

  if (looksLikeEbcdic(sample)) {
    const page = ebcdicPunctuationScore(decodeEbcdic(sample, 'cp037')) > ebcdicPunctuationScore(decodeEbcdic(sample, 'cp500'))
      ? 'cp037'
      : 'cp500';
    return { text: decodeEbcdic(bytes, page), encoding: page };
  }

  const matches = chardet.analyse(sample);
  const top = matches[0];
  if (top && MULTI_BYTE.has(top.name) && top.confidence >= 50) {
    const text = iconv.decode(Buffer.from(sample), top.name);
    if (!text.includes('\uFFFD')) return { text: iconv.decode(Buffer.from(bytes), top.name), encoding: top.name };
  }

  // chardet's statistics are a tie-breaker between decodings that look equally plausible letter by letter.
  const confidence = new Map<string, number>();
  for (const m of matches) {
    const name = m.name.toLowerCase();
    if (!MULTI_BYTE.has(m.name) && iconv.encodingExists(name) && !confidence.has(name)) confidence.set(name, m.confidence);
  }
  const names = new Set<string>([...confidence.keys(), ...SINGLE_BYTE_CANDIDATES]);
  let best = '';
  let bestScore = -Infinity;
  for (const encoding of names) {
    const text = iconv.decode(Buffer.from(sample), encoding);
    const score = plausibility(text) + ((confidence.get(encoding) ?? 0) / 100) * 0.1 * nonAscii(text);
    if (score > bestScore) {
      best = encoding;
      bestScore = score;
    }
  }
  return { text: iconv.decode(Buffer.from(bytes), best), encoding: best };
}

function nonAscii(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 0x80) n++;
  return n;
}

/** cp037 and cp500 differ only in ! [ ] ^ | ¢ ¬; prose has "word!" far more often than "word|" or ¢ and ¬. */
function ebcdicPunctuationScore(text: string): number {
  return (text.match(/\p{L}[!?]/gu)?.length ?? 0) - (text.match(/[¢¬]|\p{L}\|/gu)?.length ?? 0);
}

/** UTF-16 without a BOM: most ASCII-range characters put a zero in the high byte, so one parity is full of NULs. */
function utf16Parity(sample: Uint8Array): 'utf-16le' | 'utf-16be' | null {
  const pairs = Math.floor(sample.length / 2);
  if (pairs < 2) return null;
  let evenZero = 0;
  let oddZero = 0;
  for (let i = 0; i + 1 < sample.length; i += 2) {
    if (sample[i] === 0) evenZero++;
    if (sample[i + 1] === 0) oddZero++;
  }
  if (oddZero / pairs > 0.3 && evenZero / pairs < 0.02) return 'utf-16le';
  if (evenZero / pairs > 0.3 && oddZero / pairs < 0.02) return 'utf-16be';
  return null;
}

/**
 * UTF-16 without a BOM in a non-Latin script has no zero bytes (Cyrillic is 04xx), but its high bytes take only a
 * handful of values while the low bytes vary. Single-byte text that is mostly spaces (a fixed-width report, deeply
 * indented code) has a handful of values on both sides, spaces on each: in UTF-16 the low bytes carry the letters,
 * so a low side as concentrated as that is not UTF-16 (read as such it became "瑩浥‰†††"). Accepted only when the
 * decoded text is clean.
 */
function utf16HighBytes(sample: Uint8Array): 'utf-16le' | 'utf-16be' | null {
  if (sample.length < 16) return null;
  const top3 = (counts: Map<number, number>) => [...counts.values()].sort((a, b) => b - a).slice(0, 3).reduce((a, b) => a + b, 0);
  for (const [parity, encoding] of [[1, 'utf-16le'], [0, 'utf-16be']] as const) {
    const high = new Map<number, number>();
    const low = new Map<number, number>();
    let n = 0;
    for (let i = 0; i + 1 < sample.length; i += 2) {
      const h = sample[i + parity]!;
      const l = sample[i + 1 - parity]!;
      high.set(h, (high.get(h) ?? 0) + 1);
      low.set(l, (low.get(l) ?? 0) + 1);
      n++;
    }
    if (top3(high) / n < 0.9 || low.size < 8 || top3(low) / n > 0.6) continue;
    const text = new TextDecoder(encoding).decode(sample.subarray(0, sample.length - (sample.length % 2)));
    if (!text.includes('\uFFFD') && !isBinary(text)) return encoding;
  }
  return null;
}

/** Letters of the scripts whose UTF-16 high bytes spread over dozens of values (Chinese, Korean, Japanese). */
const CJK_LETTER = /[\p{Script=Han}\p{Script=Hangul}\p{Script=Hiragana}\p{Script=Katakana}]/gu;
const TEXT_CHAR = /[\p{L}\p{N}\p{P}\p{Zs}\t\n\r]/gu;

/**
 * UTF-16 without a BOM in Chinese or Korean, with a line break, space or digit here and there: too few zero bytes
 * for utf16Parity and too many high bytes for utf16HighBytes (such files were refused as binary). It has zero bytes
 * (no legacy single- or multi-byte text has any; on either parity, as 一 is U+4E00), and one byte order's decoding
 * is at least half CJK letters and nearly all letters, digits, punctuation and spaces, without an unpaired surrogate.
 */
function utf16Cjk(sample: Uint8Array): 'utf-16le' | 'utf-16be' | null {
  // Below 128 bytes, random bytes pass now and then.
  if (sample.length < 128 || !sample.includes(0)) return null;
  for (const encoding of ['utf-16le', 'utf-16be'] as const) {
    // A head cut mid-pair may end in half a surrogate pair.
    const text = new TextDecoder(encoding).decode(sample.subarray(0, sample.length - (sample.length % 2))).replace(/\uFFFD$/, '');
    if (text.includes('\uFFFD')) continue;
    const cjk = text.match(CJK_LETTER)?.length ?? 0;
    const plain = text.match(TEXT_CHAR)?.length ?? 0;
    if (cjk / text.length >= 0.5 && plain / text.length >= 0.95) return encoding;
  }
  return null;
}

function nulRatio(sample: Uint8Array): number {
  let n = 0;
  for (const b of sample) if (b === 0) n++;
  return n / sample.length;
}

function decodeUtf8(bytes: Uint8Array, partial: boolean): string | null {
  try {
    // `stream: true` lets a head cut mid-character pass; the rest of the file is checked when it is parsed.
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: partial });
  } catch {
    return null;
  }
}

function isBinary(text: string): boolean {
  if (text.length === 0) return false;
  const sample = text.length > SAMPLE_BYTES ? text.slice(0, SAMPLE_BYTES) : text;
  let bad = 0;
  for (let i = 0; i < sample.length; i++) {
    const c = sample.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0c && c !== 0x0d) || c === 0xfffd || (c >= 0x7f && c < 0xa0 && c !== 0x85)) bad++;
  }
  return bad / sample.length > MAX_CONTROL_RATIO;
}

function normalizeNewlines(text: string): string {
  return text.replace(/^\uFEFF/, '').replace(/\r\n?|\u0085|\u2028/g, '\n').replace(/\0/g, '');
}

const LETTER = /\p{L}/u;
const LOWER = /\p{Ll}/u;
const UPPER = /\p{Lu}/u;
const WORD = /\p{L}+/gu;

/**
 * How much a decoding looks like natural text. Wrong code pages show as control characters, stray symbols,
 * rare letters, words mixing scripts, and case flipped mid-word (KOI8-R read as cp1251 gives "пРИВЕТ").
 * Natural text is mostly lower case, which separates the Cyrillic code pages that only permute the cases.
 */
function plausibility(text: string): number {
  let score = 0;
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    if (c < 0x80) continue;
    if (c === 0xfffd) score -= 10;
    else if (c < 0xa0) score -= 5;
    else if (LETTER.test(ch)) {
      score += 1;
      if (LOWER.test(ch)) score += 0.5;
      if (isRareLetter(c)) score -= 1.5;
    } else if (!COMMON_SYMBOLS.has(c) && !(c >= 0xa0 && c <= 0xbf) && c !== 0xd7 && c !== 0xf7) score -= 1;
  }
  for (const m of text.matchAll(WORD)) {
    const word = m[0];
    if (/^[\x00-\x7f]+$/.test(word)) continue;
    if (word.length === 1) {
      // A lone non-ASCII capital or Central European letter is usually a symbol decoded with the wrong table.
      const c = word.codePointAt(0)!;
      if (UPPER.test(word) || (c >= 0x100 && c <= 0x17f)) score -= 2;
      continue;
    }
    const scripts = scriptSet(word);
    if (scripts > 1) score -= 3;
    let seenLower = false;
    for (const ch of word) {
      if (LOWER.test(ch)) seenLower = true;
      else if (seenLower && UPPER.test(ch)) {
        score -= 2;
        break;
      }
    }
  }
  return score;
}

/** Punctuation a legacy code page legitimately carries in prose: quotes, dashes, ellipsis, currency, degrees. */
const COMMON_SYMBOLS = new Set([
  0xa0, 0xab, 0xbb, 0xb0, 0xa7, 0xb7, 0xa9, 0xae, 0x2013, 0x2014, 0x2018, 0x2019, 0x201c, 0x201d, 0x201e,
  0x2026, 0x20ac, 0xa3, 0xa5, 0x2022, 0x2116, 0xbf, 0xa1, 0x2122,
]);

/** Letters outside the everyday alphabets of Latin-1, Greek, Cyrillic (Russian/Ukrainian), Hebrew, Arabic, Thai. */
function isRareLetter(c: number): boolean {
  if (c >= 0xc0 && c <= 0xff) return false;
  if (c >= 0x100 && c <= 0x17f) return false; // Latin Extended-A: Central European letters
  if (c >= 0x386 && c <= 0x3ce) return false;
  if (c >= 0x410 && c <= 0x44f) return false;
  if (c === 0x401 || c === 0x451 || c === 0x404 || c === 0x454 || c === 0x406 || c === 0x456 || c === 0x407 || c === 0x457) return false;
  if (c >= 0x5d0 && c <= 0x5ea) return false;
  if (c >= 0x621 && c <= 0x64a) return false;
  if (c >= 0xe01 && c <= 0xe5b) return false;
  return true;
}

function scriptSet(word: string): number {
  let latin = 0;
  let greek = 0;
  let cyrillic = 0;
  let other = 0;
  for (const ch of word) {
    const c = ch.codePointAt(0)!;
    if (c < 0x250) latin = 1;
    else if (c >= 0x370 && c < 0x400) greek = 1;
    else if (c >= 0x400 && c < 0x530) cyrillic = 1;
    else other = 1;
  }
  return latin + greek + cyrillic + other;
}
