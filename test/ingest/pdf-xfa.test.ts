/**
 * Pure XFA forms: the PDF's page is only a "Please wait..." placeholder, and the text comes from the form — static
 * text, captions and the values filled in from its datasets — page by page as pdf.js lays it out. The committed
 * form test/fixtures/xfa/mooring-permit.pdf (written by make.py beside it); forms built here that the parser must
 * read from their pages as before (a hybrid AcroForm + XFA file, a form without text, one pdf.js cannot lay out);
 * and the corpus's own forms (../shared/eval/docs, skipped with a reason when absent).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from '../../src/ingest/parsers/pdf.js';
import { REPO, SHARED } from '../helpers/daemon.js';
import { unmet } from '../helpers/requirement.js';
import { assemblePdf } from './build-fixtures.js';

const text = (doc: { blocks: { text: string }[] }): string => doc.blocks.map((b) => b.text).join('\n');
const onPage = (doc: { blocks: { text: string; page?: number }[] }, page: number): string => text({ blocks: doc.blocks.filter((b) => b.page === page) });

describe('a pure XFA form', () => {
  it('gives its captions, static text and filled values, page by page, without the placeholder', async () => {
    const doc = await parse(readFileSync(join(REPO, 'test/fixtures/xfa/mooring-permit.pdf')));
    expect(doc.pages).toBe(2);
    expect(doc.title).toBe('Application for a Seasonal Mooring Permit');
    expect(text(doc)).not.toMatch(/Please wait|PDF viewer/);
    // A field reads as its caption followed by its value.
    expect(doc.blocks.filter((b) => b.page === 1).map((b) => b.text)).toEqual([
      'Application for a Seasonal Mooring Permit',
      'Complete every part in block capitals. A permit is issued for one vessel and one berth for the whole season.',
      'Registered name of the vessel Cormorant Wanderlust',
      'Overall length of the hull (metres) 11.4',
      // The chosen entry of a choice list, not the ones left unchosen.
      'Berth requested Kelp basin pontoon',
      'Cargo or equipment carried on board Two lobster creels and a folding dinghy',
    ]);
    expect(doc.blocks.find((b) => b.page === 1)?.kind).toBe('heading');
    expect(onPage(doc, 2)).toBe(
      [
        'Declaration of the master',
        'I declare that the vessel carries third-party insurance and will leave the berth when the harbour master so directs.',
        'Name of the master Ingrid Vasquez-Thorne',
      ].join('\n'),
    );
    // The master page's header and footer, on both pages, are page furniture as in any PDF.
    expect(text(doc)).not.toMatch(/Berthing Office|HB-7/);
    expect(doc.warnings).toEqual([]);
  });
});

/** A one-page PDF whose page says `page` and whose XFA template is `template` (datasets: `data`, if any). */
function formPdf(opts: { page: string; template: string; data?: string; acroFormField?: boolean }): Buffer {
  const stream = (d: string) => `<< /Length ${Buffer.byteLength(d, 'latin1')} >>\nstream\n${d}\nendstream`;
  const packets = [`(preamble) 5 0 R (template) 6 0 R`, opts.data ? '(datasets) 9 0 R' : '', '(postamble) 7 0 R'].join(' ');
  const objects = [
    `<< /Type /Catalog /Pages 2 0 R /NeedsRendering true /AcroForm << /Fields [${opts.acroFormField ? '10 0 R' : ''}] /XFA [${packets}] >> >>`,
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 8 0 R >> >> /Contents 4 0 R${opts.acroFormField ? ' /Annots [10 0 R]' : ''} >>`,
    stream(`BT /F1 12 Tf 72 720 Td (${opts.page}) Tj ET`),
    stream('<xdp:xdp xmlns:xdp="http://ns.adobe.com/xdp/">'),
    stream(opts.template),
    stream('</xdp:xdp>'),
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
    stream(`<xfa:datasets xmlns:xfa="http://www.xfa.org/schema/xfa-data/1.0/"><xfa:data>${opts.data ?? ''}</xfa:data></xfa:datasets>`),
    '<< /Type /Annot /Subtype /Widget /FT /Tx /T (vessel) /V (Skerry Lark) /Rect [72 600 300 620] /P 3 0 R >>',
  ];
  return assemblePdf(objects);
}

const PAGE_SET = '<pageSet><pageArea name="P"><contentArea x="0.5in" y="0.5in" w="7.5in" h="10in"/><medium stock="letter" short="8.5in" long="11in"/></pageArea></pageSet>';
const template = (body: string, pageSet = PAGE_SET) => `<template xmlns="http://www.xfa.org/schema/xfa-template/3.3/"><subform name="f" layout="tb">${pageSet}${body}</subform></template>`;
const WITH_TEXT = template('<draw w="7in" h="0.5in"><value><text>Tide table request form</text></value></draw><field name="vessel" w="7in" h="0.4in"><caption reserve="2in"><value><text>Vessel</text></value></caption><ui><textEdit/></ui></field>');

describe('PDFs read from their pages, as before', () => {
  it('a hybrid form (AcroForm fields beside its XFA): its pages and fields', async () => {
    const doc = await parse(formPdf({ page: 'Harbour dues paper form', template: WITH_TEXT, data: '<f><vessel>Skerry Lark</vessel></f>', acroFormField: true }));
    expect(doc.pages).toBe(1);
    expect(text(doc)).toMatch(/Harbour dues paper form/);
    expect(text(doc)).toMatch(/Skerry Lark/);
    expect(text(doc)).not.toMatch(/Tide table request form/);
  });

  it('a pure XFA form without any text: its placeholder page', async () => {
    const doc = await parse(formPdf({ page: 'Please wait for the form to load', template: template('<field name="a" w="2in" h="0.3in"><ui><textEdit/></ui></field>') }));
    expect(text(doc)).toBe('Please wait for the form to load');
  });

  it('a pure XFA form pdf.js cannot lay out (no page set): its placeholder page, not a failure', async () => {
    const doc = await parse(formPdf({ page: 'Please wait for the form to load', template: template('<draw w="7in" h="0.5in"><value><text>Tide table request form</text></value></draw>', '') }));
    expect(text(doc)).toBe('Please wait for the form to load');
    expect(doc.warnings).toEqual([]);
  });
});

const DOCS = process.env.DOCSEARCH_EVAL_DOCS_DIR ?? join(SHARED, 'eval/docs');
const corpus = unmet(existsSync(join(DOCS, 'manifest.tsv')) ? null : `../shared/eval/docs is absent (not found at ${DOCS})`) === null;

describe.skipIf(!corpus)('the corpus forms', () => {
  const read = (name: string) => parse(readFileSync(join(DOCS, 'pdf', name)));

  // 3 MB of XFA laid out into 7 pages: about 1.5 s of CPU, more on a busy machine.
  it('xfa-dynamic-form.pdf (IMM 1344, pure XFA, filled in): its 7 pages of captions and values', { timeout: 120_000 }, async () => {
    const doc = await read('xfa-dynamic-form.pdf');
    expect(doc.pages).toBe(7);
    expect(text(doc)).not.toMatch(/Please wait|PDF viewer may not/);
    expect(onPage(doc, 1)).toContain('*Status in Canada Naturalized Canadian citizen');
    expect(onPage(doc, 1)).toContain('*City/Town Brunswick');
    expect(onPage(doc, 2)).toContain('SPONSOR CONTACT INFORMATION');
    expect(new Set(doc.blocks.map((b) => b.page))).toEqual(new Set([1, 2, 3, 4, 5, 6, 7]));
  });

  it('the hybrid forms keep their pages\' text', async () => {
    const govdocs = await read('xfa-govdocs.pdf');
    expect(govdocs.pages).toBe(1);
    expect(govdocs.blocks[0]?.text).toBe('National Park Service U.S. Department of the Interior');
    const nonLatin = await read('encrypted-aes-xfa-nonlatin.pdf');
    expect(nonLatin.pages).toBe(1);
    expect(nonLatin.blocks[0]?.text).toBe('A N E X O');
  });
});

if (!corpus) describe('the corpus forms', () => {
  it.skip(`needs ../shared/eval/docs (not found at ${DOCS}; set DOCSEARCH_EVAL_DOCS_DIR)`, () => {});
});
