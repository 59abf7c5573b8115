/**
 * E-mail (.eml, RFC 5322 / MIME) through postal-mime: the subject is the title and the heading of every passage;
 * From, To, Cc and Date open the text as one line, so a search for a sender finds the message; the body is the
 * text part, or the HTML part read through the HTML path (html.ts) when there is no text part. The same fields are
 * the document's metadata (`email`). Attachments of a type the pipeline reads (decided from their bytes, as an
 * upload's) are handed back to become documents of their own, linked to the message (ingest/attachments.ts), at
 * most MAX_ATTACHMENTS of them; the others are named in a warning. A message of more MIME parts than MAX_PARTS is
 * refused before it is decoded: each part costs the decoder memory, and no real message has that many.
 */
import { basename, extname } from 'node:path';
import PostalMime, { type Address, type Attachment as MailAttachment } from 'postal-mime';
import { codePointCount, cutChars } from '../../core/code-points.js';
import { fitFilename, MAX_FILENAME_CHARS } from '../../core/name-limits.js';
import { readableName } from '../../core/unsafe-text.js';
import { sniffCfb } from '../sniff-cfb.js';
import { OLE2_CFB, SNIFF_BYTES, sniffType, ZIP } from '../sniff.js';
import { sniffZip } from '../sniff-zip.js';
import type { Attachment, Block, DocumentType, ParsedDocument, ParseOptions } from '../types.js';
import { ParseError } from './errors.js';
import { htmlBlocks } from './html.js';
import { fromText } from './txt.js';

const NOUN = 'the e-mail';
export const MAX_PARTS = 1_000;
/** Attachments that become documents, per message; the rest are named in the warning. */
export const MAX_ATTACHMENTS = 100;

export async function parse(bytes: Uint8Array, _opts: ParseOptions = {}): Promise<ParsedDocument> {
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const parts = raw.toString('latin1').match(/^content-type:/gim)?.length ?? 0;
  if (parts > MAX_PARTS) throw new ParseError(`${NOUN} has ${parts.toLocaleString('en')} MIME parts (more than ${MAX_PARTS.toLocaleString('en')}) — refused`);
  let mail: Awaited<ReturnType<typeof PostalMime.parse>>;
  try {
    mail = await PostalMime.parse(raw, { attachmentEncoding: 'arraybuffer', maxNestingDepth: 50, maxHeadersSize: 1024 * 1024 });
  } catch (err) {
    throw new ParseError(`${NOUN} could not be read: ${cutChars((err instanceof Error ? err.message : String(err)).split('\n')[0]!, 120)}`, { cause: err });
  }
  const subject = mail.subject?.replace(/\s+/g, ' ').trim();
  const headings = subject ? [subject] : [];
  const fields = [
    ['From', addresses(mail.from ? [mail.from] : [])],
    ['To', addresses(mail.to ?? [])],
    ['Cc', addresses(mail.cc ?? [])],
    ['Date', mail.date ?? ''],
  ].filter(([, v]) => v);
  const blocks: Block[] = [];
  if (subject) blocks.push({ text: subject, headings, kind: 'heading' });
  if (fields.length) blocks.push({ text: fields.map(([k, v]) => `${k}: ${v}`).join(' · '), headings, kind: 'paragraph' });
  const body = mail.text?.trim() ? fromText(mail.text).blocks : mail.html ? htmlBlocks(mail.html).blocks : [];
  // The body's own "# lines" or HTML headings nest under the subject.
  for (const b of body) blocks.push({ ...b, headings: [...headings, ...b.headings], kind: b.kind === 'heading' ? 'paragraph' : b.kind });
  const warnings: string[] = [];
  const attachments: Attachment[] = [];
  const skipped: string[] = [];
  const files = mail.attachments.filter((a) => a.disposition !== 'inline' || a.filename);
  const names = new Set<string>();
  for (const [i, a] of files.entries()) {
    const filename = unique(cleanName(a.filename, i), names);
    const bytes = new Uint8Array(a.content as ArrayBuffer);
    const type = attachments.length < MAX_ATTACHMENTS ? await sniff(bytes, filename) : null;
    if (type) attachments.push({ filename, contentType: type, bytes });
    else skipped.push(filename);
  }
  if (skipped.length) warnings.push(`attachments not indexed (not a type docsearch reads, or more than ${MAX_ATTACHMENTS}): ${skipped.slice(0, 10).join(', ')}${skipped.length > 10 ? ` and ${skipped.length - 10} more` : ''}`);
  if (!body.length) warnings.push('no text found in the message body');
  const doc: ParsedDocument = { blocks, warnings, metadata: { email: headerFields(mail, subject) } };
  if (attachments.length) doc.attachments = attachments;
  if (subject) doc.title = subject;
  return doc;
}

/** From, To, Cc, Date and Subject as the document's metadata: addresses as written, the date in ISO 8601 when it parses. */
function headerFields(mail: Awaited<ReturnType<typeof PostalMime.parse>>, subject: string | undefined): Record<string, unknown> {
  const list = (l: Address[] | undefined) => (l ?? []).flatMap((a) => (a.group ? a.group : [a])).map((m) => (m.name && m.address ? `${m.name} <${m.address}>` : m.address || m.name || '')).filter((s) => s);
  const date = mail.date ? new Date(mail.date) : null;
  return {
    from: list(mail.from ? [mail.from] : [])[0] ?? null,
    to: list(mail.to),
    cc: list(mail.cc),
    date: date && !Number.isNaN(date.getTime()) ? date.toISOString() : (mail.date ?? null),
    subject: subject ?? null,
  };
}

/** The type an attachment's bytes are, as an upload's would be, or null when the pipeline does not read it. */
async function sniff(bytes: Uint8Array, filename: string): Promise<DocumentType | null> {
  if (bytes.byteLength === 0) return null;
  const head = bytes.subarray(0, SNIFF_BYTES);
  const type = sniffType(head, filename);
  if (type === ZIP) return sniffZip(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), head);
  if (type === OLE2_CFB) return sniffCfb(bytes);
  return type;
}

/** Two attachments of one name get paths of their own under the message: "a.pdf", "a (2).pdf". */
function unique(name: string, taken: Set<string>): string {
  const ext = extname(name);
  let out = name;
  // The number goes before the extension, within the 255 characters a name may have (the stem gives way).
  for (let n = 2; taken.has(out.toLowerCase()); n++) {
    const tail = ` (${n})${ext}`;
    out = cutChars(name.slice(0, name.length - ext.length), MAX_FILENAME_CHARS - codePointCount(tail)) + tail;
  }
  taken.add(out.toLowerCase());
  return out;
}

/**
 * The attachment's name as a document's filename: no folders, none of the characters a name refuses (controls, bidi, invisible), at most 255 characters
 * with its extension kept (as an uploaded file's name), never `.` or `..` (it is also the last segment of the attachment's path, `mail/x.eml/<name>`).
 */
function cleanName(raw: MailAttachment['filename'], index: number): string {
  const name = readableName(basename((raw ?? '').replaceAll('\\', '/'))).trim();
  return name && name !== '.' && name !== '..' ? fitFilename(name) : `attachment-${index + 1}`;
}

function addresses(list: Address[]): string {
  return list
    .flatMap((a) => (a.group ? a.group : [a]))
    .map((m) => (m.name && m.address ? `${m.name} (${m.address})` : m.name || m.address || ''))
    .filter((s) => s)
    .join(', ');
}
