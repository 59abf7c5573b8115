import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { OLE2_CFB, sniffType, ZIP } from '../../src/ingest/sniff.js';
import { sniffZip } from '../../src/ingest/sniff-zip.js';
import { makeDocx, makePdf, makeZip, para } from './build-fixtures.js';

describe('sniffType', () => {
  it('recognises PDF, also after leading junk', () => {
    expect(sniffType(makePdf([[{ lines: ['x'] }]]), 'anything.txt')).toBe('application/pdf');
    expect(sniffType(Buffer.concat([Buffer.alloc(500, 0x20), Buffer.from('%PDF-1.7\n')]))).toBe('application/pdf');
    expect(sniffType(Buffer.concat([Buffer.alloc(1500, 0x41), Buffer.from('%PDF-1.7\n')]))).toBe('text/plain');
  });

  it('reports a zip for sniff-zip.ts to name, and an OLE2 container as its own kind', async () => {
    const docx = makeDocx(para('hi'));
    expect(sniffType(docx, 'report.pdf')).toBe(ZIP);
    expect(await sniffZip(docx, docx.subarray(0, 8192))).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    const epub = makeZip({ mimetype: 'application/epub+zip', 'META-INF/container.xml': '<container/>' });
    expect(await sniffZip(epub, epub)).toBe('application/epub+zip');
    // A truncated archive (no central directory) is named from its first local header: an EPUB's stored mimetype.
    const cut = readFileSync(join(import.meta.dirname, '../fixtures/formats/coast.epub')).subarray(0, 200);
    expect(await sniffZip(cut, cut)).toBe('application/epub+zip');
    expect(await sniffZip(makeZip({ 'a.txt': 'x' }), makeZip({ 'a.txt': 'x' }))).toBeNull();
    expect(sniffType(Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0]))).toBe(OLE2_CFB);
  });

  it('recognises text in several encodings, by content only', () => {
    expect(sniffType(Buffer.from('plain words\n'), 'x.pdf')).toBe('text/plain');
    expect(sniffType(Buffer.from('текст по-русски', 'utf16le'))).toBe('text/plain');
    expect(sniffType(iconv.encode('Однажды в студёную зимнюю пору', 'koi8-r'))).toBe('text/plain');
    // UTF-32 with its BOM, either byte order (docs/ingest.md: BOM UTF-8/16/32).
    expect(sniffType(Buffer.concat([Buffer.from([0xff, 0xfe, 0, 0]), iconv.encode('words of a text file', 'utf-32le')]))).toBe('text/plain');
    expect(sniffType(Buffer.concat([Buffer.from([0, 0, 0xfe, 0xff]), iconv.encode('words of a text file', 'utf-32be')]))).toBe('text/plain');
    // A head cut in the middle of a UTF-8 character is still text.
    expect(sniffType(Buffer.from('ééé', 'utf8').subarray(0, 5))).toBe('text/plain');
  });

  it('names images, RTF, HTML and e-mail by their bytes, and Markdown, CSV, TSV text by the name', () => {
    expect(sniffType(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]), 'x.pdf')).toBe('image/png');
    expect(sniffType(Buffer.from([0xff, 0xd8, 0xff, 0xe0]))).toBe('image/jpeg');
    expect(sniffType(Buffer.from('II*\0', 'latin1'))).toBe('image/tiff');
    expect(sniffType(Buffer.from('RIFF\0\0\0\0WEBPVP8 ', 'latin1'))).toBe('image/webp');
    expect(sniffType(Buffer.from('{\\rtf1\\ansi hi}'), 'x.txt')).toBe('application/rtf');
    expect(sniffType(Buffer.from('\n<!DOCTYPE html><p>hi'), 'x.txt')).toBe('text/html');
    expect(sniffType(Buffer.from('From: a@b.example\r\nSubject: hi\r\n\r\nbody'), 'note.txt')).toBe('message/rfc822');
    expect(sniffType(Buffer.from('# Title\n'), 'a.md')).toBe('text/markdown');
    expect(sniffType(Buffer.from('a,b\n1,2\n'), 'a.csv')).toBe('text/csv');
    expect(sniffType(Buffer.from('a\tb\n'), 'a.tsv')).toBe('text/tab-separated-values');
    // A name never makes text out of binary, nor HTML out of plain text.
    expect(sniffType(Buffer.from([0, 1, 2, 3, 0xff, 0xfe, 0, 0, 7, 8]), 'a.md')).toBeNull();
    expect(sniffType(Buffer.from('just words\n'), 'a.html')).toBe('text/plain');
  });

  it('returns null for binary and for other formats', () => {
    expect(sniffType(Buffer.from('GIF89a\x01\x00\x01\x00\x80\x00\x00', 'latin1'))).toBeNull();
    const junk = Buffer.alloc(2048);
    for (let i = 0; i < junk.length; i++) junk[i] = (i * 31) % 256;
    expect(sniffType(junk)).toBeNull();
    expect(sniffType(Buffer.alloc(0))).toBeNull();
  });
});
