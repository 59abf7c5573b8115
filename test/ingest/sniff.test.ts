import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { OLE2_CFB, sniffType } from '../../src/ingest/sniff.js';
import { makeDocx, makePdf, para } from './build-fixtures.js';

describe('sniffType', () => {
  it('recognises PDF, also after leading junk', () => {
    expect(sniffType(makePdf([[{ lines: ['x'] }]]), 'anything.txt')).toBe('application/pdf');
    expect(sniffType(Buffer.concat([Buffer.alloc(500, 0x20), Buffer.from('%PDF-1.7\n')]))).toBe('application/pdf');
    expect(sniffType(Buffer.concat([Buffer.alloc(1500, 0x41), Buffer.from('%PDF-1.7\n')]))).toBe('text/plain');
  });

  it('reports a zip as DOCX and an OLE2 container as its own kind', () => {
    expect(sniffType(makeDocx(para('hi')), 'report.pdf')).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    expect(sniffType(Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0]))).toBe(OLE2_CFB);
  });

  it('recognises text in several encodings, by content only', () => {
    expect(sniffType(Buffer.from('plain words\n'), 'x.pdf')).toBe('text/plain');
    expect(sniffType(Buffer.from('текст по-русски', 'utf16le'))).toBe('text/plain');
    expect(sniffType(iconv.encode('Однажды в студёную зимнюю пору', 'koi8-r'))).toBe('text/plain');
    // A head cut in the middle of a UTF-8 character is still text.
    expect(sniffType(Buffer.from('ééé', 'utf8').subarray(0, 5))).toBe('text/plain');
  });

  it('returns null for binary and for other formats', () => {
    expect(sniffType(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]))).toBeNull();
    const junk = Buffer.alloc(2048);
    for (let i = 0; i < junk.length; i++) junk[i] = (i * 31) % 256;
    expect(sniffType(junk)).toBeNull();
    expect(sniffType(Buffer.alloc(0))).toBeNull();
  });
});
