/**
 * One hostile file per format (#41): a zip bomb in a PPTX, XXE and "billion laughs" in XLSX/ODT/EPUB XML, an HTML
 * page of 1,000,000 nested elements, a 100,000 × 100 CSV, a 40,000 × 40,000 PNG, an e-mail with 10,000
 * attachments — each with the message its document must fail with. test/ingest/formats/formats.test.ts uploads
 * them through the daemon; bench/soak.ts sends them in its bursts of bad input.
 */
import { crc32, deflateSync } from 'node:zlib';
import { makeZip } from '../build-fixtures.js';

export function hostileFormatFiles(): [name: string, bytes: Buffer, failsWith: RegExp][] {
  const laughs = '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>';
  const xxe = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>';
  const pptxTypes = '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/ppt/presentation.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"/></Types>';
  const xlsxTypes = '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/></Types>';
  const odt = (content: string) => makeZip({ mimetype: 'application/vnd.oasis.opendocument.text', 'content.xml': content });
  const epub = (opf: string) =>
    makeZip({
      mimetype: 'application/epub+zip',
      'META-INF/container.xml': '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="content.opf"/></rootfiles></container>',
      'content.opf': opf,
    });
  const cells = `${Array.from({ length: 100 }, (_, i) => `c${i}`).join(',')}\n`;
  const attachments = Array.from({ length: 10_000 }, (_, i) => `--B\nContent-Type: text/plain; name="a${i}.txt"\nContent-Disposition: attachment\n\nx\n`).join('');
  return [
    ['bomb.pptx', makeZip({ '[Content_Types].xml': pptxTypes, 'ppt/presentation.xml': '<p:presentation xmlns:p="p"/>', 'ppt/slides/slide1.xml': Buffer.alloc(20 * 1024 * 1024, 0x20) }), /^The PowerPoint presentation is compressed suspiciously well — refused as a possible zip bomb$/],
    ['laughs.xlsx', makeZip({ '[Content_Types].xml': xlsxTypes, 'xl/workbook.xml': `${laughs}<workbook>&lol3;</workbook>` }), /^the Excel workbook has an XML part with a DOCTYPE/],
    ['xxe.xlsx', makeZip({ '[Content_Types].xml': xlsxTypes, 'xl/workbook.xml': `${xxe}<workbook>&xxe;</workbook>` }), /^the Excel workbook has an XML part with a DOCTYPE/],
    ['laughs.odt', odt(`${laughs}<office:document-content>&lol3;</office:document-content>`), /^the OpenDocument text \(\.odt\) has an XML part with a DOCTYPE/],
    ['xxe.odt', odt(`${xxe}<office:document-content>&xxe;</office:document-content>`), /^the OpenDocument text \(\.odt\) has an XML part with a DOCTYPE/],
    ['laughs.epub', epub(`${laughs}<package>&lol3;</package>`), /^the EPUB has an XML part with a DOCTYPE/],
    ['xxe.epub', epub(`${xxe}<package>&xxe;</package>`), /^the EPUB has an XML part with a DOCTYPE/],
    ['nested.html', Buffer.from(`<!DOCTYPE html><html><body>${'<div>'.repeat(1_000_000)}deep`), /^the HTML nests elements more than 5,000 deep/],
    ['huge.csv', Buffer.from(cells.repeat(100_000)), /^the CSV file has more than 1,000,000 filled cells — too large to index/],
    ['huge.png', hugePng(40_000, 40_000), /^the PNG image is 40,000 × 40,000 pixels — more than the 100-million-pixel limit$/],
    ['many.eml', Buffer.from(`From: a@example.org\nSubject: many\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n${attachments}--B--\n`), /^the e-mail has 10,001 MIME parts \(more than 1,000\) — refused$/],
  ];
}

/** A PNG that says it is `width` × `height` pixels: its header only (the size is checked before any pixel is read). */
function hugePng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 0, 0, 0, 0], 8); // 8-bit gray
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.alloc(1024))), chunk('IEND', Buffer.alloc(0))]);
}
