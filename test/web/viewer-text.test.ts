/**
 * The viewer shows a document it draws from its chunks (office files, and text without an original to render) as the
 * document's text: each chunk's separator, then its text past the overlap (docs/api.md, GET /documents/{id}/text).
 * A DOCX of long paragraphs is cut into chunks mid-paragraph (between two sentences); the
 * viewer's text, read as a person reads it, is the document's. Before, every separator was dropped: "vivant. Les"
 * read "vivant.Les", and a paragraph ran into the one before.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { makeDocx, para } from '../ingest/build-fixtures.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { loggedIn } from './library-client.js';

const WORDS = ['harbour', 'crane', 'tide', 'pier', 'ledger', 'rope', 'anchor', 'dock', 'buoy', 'hull'];

/** Paragraph `p`: sentences of distinct words, long enough that chunks end inside paragraphs as well as between them. */
const paragraph = (p: number) =>
  Array.from({ length: 40 }, (_, s) => `Sentence ${s + 1} of part ${p + 1} names the ${WORDS[(p + s) % WORDS.length]} and the ${WORDS[(p * 3 + s) % WORDS.length]} once more.`).join(' ');

/** Text as a person reads it: tags gone, entities decoded, whitespace runs as one space. */
const readable = (html: string) =>
  html
    .replace(/<[^>]+>/g, '')
    .replaceAll('&amp;', '&')
    .replaceAll('&#39;', "'")
    .replaceAll('&quot;', '"')
    .replace(/\s+/g, ' ')
    .trim();

describe('the viewer shows the text of a document drawn from its chunks', () => {
  let d: Daemon;
  let user: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    user = await addUser(d);
  });

  it('with the space or blank line between two chunks, as the document has it', async () => {
    const paragraphs = Array.from({ length: 5 }, (_, p) => paragraph(p));
    const up = await uploadFiles(d, user.apiKey, [{ name: 'harbour.docx', bytes: makeDocx(paragraphs.map((t) => para(t)).join('')) }], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const doc = up.body.documents[0] as { id: string; status: string };
    expect(doc.status).toBe('ready');

    // The chunks overlap, and begin inside paragraphs, after a space: the case this test is about.
    const text = await api(d, `/api/v1/documents/${doc.id}/text?limit=500`, { token: user.apiKey });
    const chunks = (text.body.pages as { chunks: { placement: { overlap: number; separator: string } }[] }[]).flatMap((p) => p.chunks);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.some((c) => c.placement.separator === ' ')).toBe(true);

    const web = await loggedIn(d, user);
    const view = await web.get(`/documents/${doc.id}/view`);
    expect(view.status).toBe(200);
    const shown = [...view.text.matchAll(/<pre class="plain"[^>]*>([\s\S]*?)<\/pre>/g)].map((m) => readable(m[1]!)).join(' ');
    expect(shown).toBe(readable(paragraphs.join('\n\n')));
    // Paragraphs stay apart as blank lines, not run together on one line.
    const pre = /<pre class="plain"[^>]*>([\s\S]*?)<\/pre>/.exec(view.text)![1]!.replace(/<[^>]+>/g, '');
    expect(pre.split('\n\n').length).toBe(paragraphs.length);
  });
});
