import { describe, expect, it } from 'vitest';
import { snippet } from '../../src/web/snippet.js';

describe('search result snippets', () => {
  const text = `${'Lead-in words about nothing much. '.repeat(12)}The marmot colonies hibernate under the scree. ${'Trailing filler text here. '.repeat(12)}`;
  const passage: [number, number] = [text.indexOf('The marmot'), text.indexOf('scree.') + 6];

  it('opens with the answer as one styled run, marks the query terms, and escapes the text', () => {
    const out = snippet({ text: `<b>x</b> ${text}`, snippet: text.slice(...passage), highlights: [[passage[0] + 9, passage[1] + 9]] }, 'marmots hibernate', 160).value;
    expect(out).toMatch(/^… <span class="passage">The <\/span><mark>marmot<\/mark>/);
    expect(out).toContain('<mark>hibernate</mark>');
    expect(out).toContain('<span class="passage"> under the scree.</span>');
    expect(snippet({ text: '<img src=x onerror=alert(1)> marmot', highlights: [] }, 'marmot').value).toBe('&lt;img src=x onerror=alert(1)&gt; <mark>marmot</mark>');
  });

  it('does not repeat the heading its chunk opens with: the result says it above the snippet (#62 item 5)', () => {
    const chunk = 'Library loans\n\nThe annual report of the institute describes its reading room. Borrowed books must be returned within nineteen days.';
    const out = snippet({ text: chunk, highlights: [], heading: 'Annual report > Library loans' }, 'library loan').value;
    expect(out).toMatch(/^The annual report/);
    expect(out).not.toContain('loans\n');
  });

  it('does not repeat the heading lines a chunk opens with when a title with nothing under it opens the next section', () => {
    const chunk = 'Lighthouse Keeping\n\nLamps\n\nThe keeper polishes the Fresnel lens and trims the wick before dusk falls.';
    const out = snippet({ text: chunk, highlights: [], heading: 'Lighthouse Keeping > Lamps' }, 'keeper lamps').value;
    expect(out).toMatch(/^The <mark>keeper<\/mark> polishes/);
    // Lines of the path in order only: a chunk opening with its section's line and then its title's keeps the second.
    expect(snippet({ text: 'Lamps\n\nLighthouse Keeping\n\nThe wick.', highlights: [], heading: 'Lighthouse Keeping > Lamps' }, 'wick').value).toMatch(/^Lighthouse Keeping\n\nThe <mark>wick/);
  });

  it('shows an e-mail’s ISO date as a time people read (#61 Low 25)', () => {
    const out = snippet({ text: 'From: Harbour Office · Date: 2026-03-03T09:00:00.000Z · the crane is back.', highlights: [] }, 'crane').value;
    expect(out).toContain('<time datetime="2026-03-03T09:00:00.000Z">2026-03-03 09:00 UTC</time>');
  });
});
