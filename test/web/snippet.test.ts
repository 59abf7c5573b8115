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
});
