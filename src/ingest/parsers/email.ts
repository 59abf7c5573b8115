/**
 * E-mail (.eml, RFC 5322 / MIME) through postal-mime: the subject is the title and the heading of every passage;
 * From, To, Cc and Date open the text as one line, so a search for a sender finds the message; the body is the
 * text part, or the HTML part read through the HTML path (html.ts) when there is no text part. Attachments are
 * named in a warning, not indexed (see docs/ingest.md). A message of more MIME parts than MAX_PARTS is refused
 * before it is decoded: each part costs the decoder memory, and no real message has that many.
 */
import PostalMime, { type Address } from 'postal-mime';
import type { Block, ParsedDocument, ParseOptions } from '../types.js';
import { ParseError } from './errors.js';
import { htmlBlocks } from './html.js';
import { fromText } from './txt.js';

const NOUN = 'the e-mail';
export const MAX_PARTS = 1_000;

export async function parse(bytes: Uint8Array, _opts: ParseOptions = {}): Promise<ParsedDocument> {
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const parts = raw.toString('latin1').match(/^content-type:/gim)?.length ?? 0;
  if (parts > MAX_PARTS) throw new ParseError(`${NOUN} has ${parts.toLocaleString('en')} MIME parts (more than ${MAX_PARTS.toLocaleString('en')}) — refused`);
  let mail: Awaited<ReturnType<typeof PostalMime.parse>>;
  try {
    mail = await PostalMime.parse(raw, { attachmentEncoding: 'arraybuffer', maxNestingDepth: 50, maxHeadersSize: 1024 * 1024 });
  } catch (err) {
    throw new ParseError(`${NOUN} could not be read: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 120)}`, { cause: err });
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
  const attached = mail.attachments.filter((a) => a.disposition !== 'inline' || a.filename).map((a) => a.filename ?? a.mimeType);
  if (attached.length) warnings.push(`attachments not indexed: ${attached.slice(0, 10).join(', ')}${attached.length > 10 ? ` and ${attached.length - 10} more` : ''}`);
  if (!body.length) warnings.push('no text found in the message body');
  const doc: ParsedDocument = { blocks, warnings };
  if (subject) doc.title = subject;
  return doc;
}

function addresses(list: Address[]): string {
  return list
    .flatMap((a) => (a.group ? a.group : [a]))
    .map((m) => (m.name && m.address ? `${m.name} (${m.address})` : m.name || m.address || ''))
    .filter((s) => s)
    .join(', ');
}
