/**
 * Small documents built in code for the ingest tests: a hand-written PDF (correct xref offsets), a zip writer
 * for DOCX packages, and a minimal WordprocessingML body. Nothing here is copied from third-party files.
 */
import { crc32, deflateRawSync, deflateSync } from 'node:zlib';

/**
 * A PDF with one page per entry; each line is drawn with Helvetica at `size`, 16 pt apart, from the top.
 * `toUnicode` gives the font a ToUnicode CMap with these bfchar pairs ("<2D> <00AD>"), deflated when
 * `deflate` is set.
 */
export function makePdf(
  pages: { lines: string[]; size?: number; x?: number; y?: number }[][],
  opts: { title?: string; toUnicode?: string[]; deflate?: boolean } = {},
): Buffer {
  const objects: string[] = [];
  const add = (body: string): number => {
    objects.push(body);
    return objects.length;
  };
  const catalog = add(''); // filled below
  const pagesObj = add('');
  const cmap = opts.toUnicode ? add(cmapStream(opts.toUnicode, opts.deflate ?? false)) : 0;
  const font = add(`<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding${cmap ? ` /ToUnicode ${cmap} 0 R` : ''} >>`);
  const kids: number[] = [];
  for (const columns of pages) {
    let stream = '';
    for (const col of columns) {
      const size = col.size ?? 11;
      let y = col.y ?? 740;
      for (const line of col.lines) {
        stream += `BT /F1 ${size} Tf ${col.x ?? 72} ${y} Td (${escapePdf(line)}) Tj ET\n`;
        y -= size * 1.45;
      }
    }
    const content = add(`<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}endstream`);
    kids.push(add(`<< /Type /Page /Parent ${pagesObj} 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 ${font} 0 R >> >> /Contents ${content} 0 R >>`));
  }
  objects[catalog - 1] = `<< /Type /Catalog /Pages ${pagesObj} 0 R >>`;
  objects[pagesObj - 1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`;
  const info = opts.title ? add(`<< /Title (${escapePdf(opts.title)}) >>`) : 0;

  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R${info ? ` /Info ${info} 0 R` : ''} >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

function cmapStream(pairs: string[], deflate: boolean): string {
  const cmap = [
    '/CIDInit /ProcSet findresource begin 12 dict begin begincmap',
    '/CMapName /Adobe-Identity-UCS def /CMapType 2 def',
    '1 begincodespacerange <00> <FF> endcodespacerange',
    `${pairs.length} beginbfchar`,
    ...pairs,
    'endbfchar',
    'endcmap CMapName currentdict /CMap defineresource pop end end',
  ].join('\n');
  if (!deflate) return `<< /Length ${cmap.length} >>\nstream\n${cmap}\nendstream`;
  const packed = deflateSync(Buffer.from(cmap, 'latin1')).toString('latin1');
  return `<< /Length ${packed.length} /Filter /FlateDecode >>\nstream\n${packed}\nendstream`;
}

function escapePdf(s: string): string {
  return s.replace(/[\\()]/g, (c) => `\\${c}`);
}

/** An entry already deflated, whose header may give any size (a zip bomb that lies about its size). */
export interface DeflatedEntry {
  deflated: Buffer;
  crc: number;
  declaredSize: number;
}

/** A zip archive (deflated entries) from name → content. */
export function makeZip(files: Record<string, string | Buffer | DeflatedEntry>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of Object.entries(files)) {
    const data = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    const packed = Buffer.isBuffer(data) ? deflateRawSync(data) : data.deflated;
    const nameBuf = Buffer.from(name, 'utf8');
    const crc = Buffer.isBuffer(data) ? crc32(data) : data.crc;
    const size = Buffer.isBuffer(data) ? data.length : data.declaredSize;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(nameBuf.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(nameBuf.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBuf, packed);
    centrals.push(central, nameBuf);
    offset += local.length + nameBuf.length + packed.length;
  }
  const dir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(centrals.length / 2, 8);
  end.writeUInt16LE(centrals.length / 2, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';

/** Paragraph XML: `style` is a built-in style id such as Heading1; `list` makes it a numbered item. */
export function para(text: string, opts: { style?: string; list?: boolean; footnote?: number } = {}): string {
  const pPr = opts.style || opts.list
    ? `<w:pPr>${opts.style ? `<w:pStyle w:val="${opts.style}"/>` : ''}${opts.list ? '<w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>' : ''}</w:pPr>`
    : '';
  const ref = opts.footnote ? `<w:r><w:footnoteReference w:id="${opts.footnote}"/></w:r>` : '';
  return `<w:p>${pPr}<w:r><w:t xml:space="preserve">${escapeXml(text)}</w:t></w:r>${ref}</w:p>`;
}

export function table(rows: string[][]): string {
  return `<w:tbl>${rows.map((r) => `<w:tr>${r.map((c) => `<w:tc>${para(c)}</w:tc>`).join('')}</w:tr>`).join('')}</w:tbl>`;
}

/** A complete .docx: body XML plus optional footnotes, with the styles and numbering the helpers refer to. */
export function makeDocx(body: string, footnotes: Record<number, string> = {}): Buffer {
  const headingStyles = [1, 2, 3]
    .map((n) => `<w:style w:type="paragraph" w:styleId="Heading${n}"><w:name w:val="heading ${n}"/></w:style>`)
    .join('');
  const files: Record<string, string> = {
    '[Content_Types].xml':
      '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
      '<Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    '_rels/.rels':
      '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
    'word/_rels/document.xml.rels':
      '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>' +
      '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering" Target="numbering.xml"/>' +
      '<Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes" Target="footnotes.xml"/></Relationships>',
    'word/styles.xml': `<?xml version="1.0" encoding="UTF-8"?><w:styles xmlns:w="${W}">${headingStyles}</w:styles>`,
    'word/numbering.xml':
      `<?xml version="1.0" encoding="UTF-8"?><w:numbering xmlns:w="${W}"><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:numFmt w:val="decimal"/></w:lvl></w:abstractNum>` +
      '<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>',
    'word/footnotes.xml':
      `<?xml version="1.0" encoding="UTF-8"?><w:footnotes xmlns:w="${W}">` +
      Object.entries(footnotes).map(([id, text]) => `<w:footnote w:id="${id}">${para(text)}</w:footnote>`).join('') +
      '</w:footnotes>',
    'word/document.xml': `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="${W}"><w:body>${body}</w:body></w:document>`,
  };
  return makeZip(files);
}

function escapeXml(s: string): string {
  return s.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!);
}

/** A PDF from numbered object bodies (object 1 the catalog), with a correct xref. */
export function assemblePdf(objects: (string | Buffer)[]): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n', 'latin1')];
  let length = parts[0]!.length;
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(length);
    const chunk = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`, 'latin1'), typeof body === 'string' ? Buffer.from(body, 'latin1') : body, Buffer.from('\nendobj\n', 'latin1')]);
    parts.push(chunk);
    length += chunk.length;
  });
  let tail = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) tail += `${String(o).padStart(10, '0')} 00000 n \n`;
  tail += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`;
  parts.push(Buffer.from(tail, 'latin1'));
  return Buffer.concat(parts);
}

const streamObject = (dict: string, data: Buffer): Buffer =>
  Buffer.concat([Buffer.from(`<< ${dict} /Length ${data.length} >>\nstream\n`, 'latin1'), data, Buffer.from('\nendstream', 'latin1')]);

/**
 * Hostile (issue #44 item 12): one page drawing an image XObject that declares `size` × `size` RGB pixels from a
 * few hundred bytes of Flate data. Decoding it as declared takes size² × 4 bytes (16000: 1 GB) before any drawing.
 */
export function makeHugeImagePdf(size = 16_000): Buffer {
  const content = Buffer.from('q 612 0 0 792 0 0 cm /Im1 Do Q\n', 'latin1');
  return assemblePdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im1 5 0 R >> >> /Contents 4 0 R >>',
    streamObject('', content),
    streamObject(`/Type /XObject /Subtype /Image /Width ${size} /Height ${size} /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode`, deflateSync(Buffer.alloc(64 * 1024))),
  ]);
}

/**
 * Hostile (issue #44 item 13): a page drawing a form XObject that draws the next one twice, `depth` deep, the
 * last a small filled square: a few KB whose page is 2^depth squares to interpret.
 * With `scan`, a second page follows: that scanned page's image, as it is.
 */
export function makeNestedFormsPdf(depth = 24, scan?: ScannedPage): Buffer {
  const first = 5; // object number of form 0
  const forms: Buffer[] = [];
  for (let i = 0; i < depth; i++) {
    const next = first + i + 1;
    const body = i === depth - 1 ? '0 0 1 rg 0 0 2 2 re f\n' : 'q /X Do Q q 1 0 0 1 0.5 0.5 cm /X Do Q\n';
    const resources = i === depth - 1 ? '' : `/Resources << /XObject << /X ${next} 0 R >> >>`;
    forms.push(streamObject(`/Type /XObject /Subtype /Form /BBox [0 0 612 792] ${resources}`, Buffer.from(body, 'latin1')));
  }
  const page2 = first + depth; // then its content stream and its image
  const [w, h] = scan?.mediaBox ?? [0, 0];
  return assemblePdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [3 0 R${scan ? ` ${page2} 0 R` : ''}] /Count ${scan ? 2 : 1} >>`,
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /X ${first} 0 R >> >> /Contents 4 0 R >>`,
    streamObject('', Buffer.from('q 10 0 0 10 0 0 cm /X Do Q\n', 'latin1')),
    ...forms,
    ...(scan
      ? [
        `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${w} ${h}] /Resources << /XObject << /Im1 ${page2 + 2} 0 R >> >> /Contents ${page2 + 1} 0 R >>`,
        streamObject('', Buffer.from(`q ${w} 0 0 ${h} 0 0 cm /Im1 Do Q\n`, 'latin1')),
        streamObject(`/Type /XObject /Subtype /Image /Width ${scan.width} /Height ${scan.height} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode`, scan.data),
      ]
      : []),
  ]);
}

/** A scanned page's image: 8-bit gray, Flate-compressed, and the page's size in points. */
export interface ScannedPage {
  width: number;
  height: number;
  data: Buffer;
  mediaBox: [number, number];
}

/**
 * Page `page` (1-based) of a scan written by Ghostscript's pdfimage8 device (test/fixtures/ocr/make-fixtures.sh):
 * each page is one gray image XObject, in page order, whose /Length is an object of its own.
 */
export function scannedPage(pdf: Buffer, page: number): ScannedPage {
  const text = pdf.toString('latin1');
  const images = [...text.matchAll(/<<\s*\/Length (\d+) 0 R\s*\/Subtype \/Image\s*\/Width (\d+)\s*\/Height (\d+)\s*\/ColorSpace \/DeviceGray\s*\/BitsPerComponent 8\s*\/Filter \/FlateDecode\s*>>\s*stream\r?\n/g)];
  const boxes = [...text.matchAll(/\/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]/g)];
  const image = images[page - 1];
  const box = boxes[page - 1];
  if (!image || !box || images.length !== boxes.length) throw new Error(`no page ${page} image in this scan (${images.length} images, ${boxes.length} pages)`);
  const length = Number(new RegExp(`(?:^|\\n)${image[1]} 0 obj\\s*(\\d+)`).exec(text)?.[1]);
  const start = image.index + image[0].length;
  return { width: Number(image[2]), height: Number(image[3]), data: pdf.subarray(start, start + length), mediaBox: [Number(box[1]), Number(box[2])] };
}
