/**
 * A document's own HTML (an HTML page, an e-mail's body, Markdown rendered) made safe to show inside our pages, with
 * sanitize-html (a well-kept allowlist sanitizer: htmlparser2 underneath, which the HTML parser already uses): no
 * script, no event handler, no style, no frame or form, and nothing that would fetch from elsewhere — an image stays
 * only when it is inline (`data:`); absolute links keep their address but open nothing by themselves; headings sit
 * under the page's own. The page's CSP (script and styles from the daemon only, images from it or `data:`) holds
 * besides.
 */
import { micromark } from 'micromark';
import { frontmatter, frontmatterHtml } from 'micromark-extension-frontmatter';
import sanitizeHtml from 'sanitize-html';
import { type Html, raw } from './html.js';

/**
 * A document's link as it stays: only an absolute one (http, https, mailto) keeps its address. A relative one ("/about",
 * "notes.html", "#top") meant its own site, and in our page would lead into docsearch instead (a 404, or a page of
 * ours): it stays as text.
 */
const documentLink: sanitizeHtml.Transformer = (tagName, attribs) => {
  const { href, ...rest } = attribs;
  if (href === undefined || !/^\s*(https?|mailto):/i.test(href)) return { tagName, attribs: rest };
  return { tagName, attribs: { ...rest, href, rel: 'noopener noreferrer nofollow', referrerpolicy: 'no-referrer' } };
};

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'h2', 'del', 'ins', 'sup', 'sub'],
  allowedAttributes: { a: ['href', 'title', 'rel', 'referrerpolicy'], img: ['src', 'alt', 'title', 'width', 'height'], td: ['colspan', 'rowspan'], th: ['colspan', 'rowspan', 'scope'], ol: ['start'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['data'] },
  allowProtocolRelative: false,
  // A whole page's <title> is the document's name, not its text (sanitize-html keeps the text of tags it drops).
  nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript', 'title'],
  // An image whose source went (a remote one) is dropped whole rather than shown broken.
  exclusiveFilter: (frame) => frame.tag === 'img' && !frame.attribs.src,
  transformTags: {
    a: documentLink,
    // The page's one h1 is the document's name: the document's own headings go a level under it (h6 stays h6).
    h1: 'h2',
    h2: 'h3',
    h3: 'h4',
    h4: 'h5',
    h5: 'h6',
  },
};

/** `dirty` HTML as markup safe to embed in a page. */
export function safeHtml(dirty: string): Html {
  return raw(sanitizeHtml(dirty, OPTIONS)); // sanitized above: the one place a document's markup reaches a page
}

/** Markdown rendered (CommonMark; raw HTML in it escaped by micromark; YAML or TOML front matter left out, as its parser reads it) and sanitized. */
export function markdownHtml(markdown: string): Html {
  const matter = ['yaml', 'toml'] as const;
  return safeHtml(micromark(markdown, { extensions: [frontmatter([...matter])], htmlExtensions: [frontmatterHtml([...matter])] }));
}
