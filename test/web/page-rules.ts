/**
 * The design system's rules (docs/design.md), checked in the page as it is drawn: what a person would see go wrong
 * at this width and in this colour scheme. One evaluate per call, so a page costs a few milliseconds besides axe.
 */
import type { Page } from 'playwright-core';
import { axeViolations } from './browser.js';

export const SIZES = { desk: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;
export type SizeName = keyof typeof SIZES;

/**
 * Runs in the page: returns one line per problem. Kept as a string (evaluate ships it to the page as it is), in
 * plain browser JavaScript.
 */
const RULES = String.raw`(() => {
  const out = [];
  const vw = window.innerWidth;
  const desk = vw >= 1000;
  const label = (el) => {
    const cls = typeof el.className === 'string' && el.className.trim() ? '.' + el.className.trim().split(/\s+/).join('.') : '';
    return el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + cls;
  };
  const words = (s) => (s || '').replace(/\s+/g, ' ').trim().slice(0, 60);
  /** Drawn and not hidden the visually-hidden way (a 1 px clipped box). */
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2) return false;
    for (let a = el; a; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.visibility === 'hidden' || s.display === 'none') return false;
      // What a closed <details> folds is not drawn (Chromium still gives it boxes); its summary is.
      if (a.parentElement?.matches('details:not([open])') && a.tagName !== 'SUMMARY') return false;
      if (s.overflow !== 'visible' && a.getBoundingClientRect().width <= 2) return false;
    }
    return r.right > 0 && r.left < vw;
  };

  // 1. The page scrolls sideways.
  if (document.documentElement.scrollWidth > vw) out.push('overflow: the page is ' + document.documentElement.scrollWidth + ' px wide in a ' + vw + ' px window');

  // 2. Something spills past its parent, which neither scrolls nor clips it.
  for (const el of document.body.querySelectorAll('*')) {
    const cs = getComputedStyle(el);
    if (cs.position === 'absolute' || cs.position === 'fixed' || cs.display === 'none' || cs.display === 'contents') continue;
    const parent = el.parentElement;
    if (!parent || parent === document.body) continue;
    const ps = getComputedStyle(parent);
    if (ps.overflowX !== 'visible' || ps.display === 'contents' || ps.display.startsWith('inline')) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || !shown(el)) continue;
    const p = parent.getBoundingClientRect();
    const past = Math.max(r.right - p.right, p.left - r.left);
    if (past > 1) out.push('overflow: ' + label(el) + ' runs ' + Math.round(past) + ' px past ' + label(parent) + ' ("' + words(el.textContent).slice(0, 30) + '")');
  }

  // 3. At desk width a table fits its card: its scroller does not scroll.
  if (desk) {
    for (const t of document.querySelectorAll('table')) {
      for (let a = t.parentElement; a && a !== document.body; a = a.parentElement) {
        if (!['auto', 'scroll'].includes(getComputedStyle(a).overflowX)) continue;
        if (!a.closest('[data-may-scroll]') && a.scrollWidth > a.clientWidth + 1) out.push('table: ' + label(t) + ' needs ' + a.scrollWidth + ' px in a ' + a.clientWidth + ' px card at ' + vw + ' px');
        break;
      }
    }
  }

  // 4. A word broken across lines inside a table cell (one that would fit the cell whole), a time that wraps.
  const lines = (range) => {
    const tops = [];
    for (const r of range.getClientRects()) if (r.width > 0 && !tops.some((t) => Math.abs(t - r.top) < 3)) tops.push(r.top);
    return tops.length;
  };
  for (const cell of document.querySelectorAll('td, th')) {
    if (!shown(cell)) continue;
    const cs = getComputedStyle(cell);
    const room = cell.getBoundingClientRect().width - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.data.matchAll(/[\p{L}\p{N}]{2,}/gu)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        if (lines(range) < 2) continue;
        const width = [...range.getClientRects()].reduce((w, r) => w + r.width, 0);
        if (width <= room) out.push('word broken: "' + m[0].slice(0, 30) + '" in ' + label(cell) + ' (' + Math.round(room) + ' px wide)');
      }
    }
  }
  for (const t of document.querySelectorAll('time')) {
    if (!shown(t)) continue;
    const range = document.createRange();
    range.selectNodeContents(t);
    if (lines(range) > 1) out.push('time wraps: "' + words(t.textContent) + '"');
  }

  // 5. Targets of at least 24 by 24 px (WCAG 2.2 SC 2.5.8), or a link inside a sentence, or nothing within 12 px of
  //    an undersized target's centre (and no other undersized target's circle meeting its own).
  const targets = [];
  for (const el of document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea, summary, [role=button], [tabindex]:not([tabindex="-1"])')) {
    if (!shown(el)) continue;
    let r = el.getBoundingClientRect();
    const holder = el.closest('label');
    if (holder && holder !== el) {
      const l = holder.getBoundingClientRect();
      r = { left: Math.min(r.left, l.left), top: Math.min(r.top, l.top), right: Math.max(r.right, l.right), bottom: Math.max(r.bottom, l.bottom) };
    }
    targets.push({ el, holder, r, small: r.right - r.left < 23.5 || r.bottom - r.top < 23.5 });
  }
  const inSentence = (el) => {
    if (el.tagName !== 'A' || getComputedStyle(el).display !== 'inline') return false;
    let block = el.parentElement;
    while (block && getComputedStyle(block).display.startsWith('inline')) block = block.parentElement;
    if (!block) return false;
    const rest = block.textContent.replace(el.textContent, '');
    return /\p{L}{2,}/u.test(rest);
  };
  const centre = (r) => ({ x: (r.left + r.right) / 2, y: (r.top + r.bottom) / 2 });
  const distance = (p, r) => Math.hypot(Math.max(r.left - p.x, 0, p.x - r.right), Math.max(r.top - p.y, 0, p.y - r.bottom));
  for (const t of targets) {
    if (!t.small || inSentence(t.el)) continue;
    const c = centre(t.r);
    const near = targets.find((o) => o !== t && !o.el.contains(t.el) && !t.el.contains(o.el) && o.holder !== t.el && t.holder !== o.el && (t.holder === null || t.holder !== o.holder) &&
      (distance(c, o.r) < 12 || (o.small && Math.hypot(c.x - centre(o.r).x, c.y - centre(o.r).y) < 24)));
    if (near) out.push('target: ' + label(t.el) + ' "' + words(t.el.getAttribute('aria-label') || t.el.textContent || t.el.value) + '" is ' + Math.round(t.r.right - t.r.left) + '×' + Math.round(t.r.bottom - t.r.top) + ' px with ' + label(near.el) + ' "' + words(near.el.textContent).slice(0, 20) + '" within 24 px');
  }

  // 6. Placeholders readable: 4.5:1 against the field.
  const rgb = (s) => (s.match(/[\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map((v) => v / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)).reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
  const background = (el) => {
    for (let a = el; a; a = a.parentElement) { const c = rgb(getComputedStyle(a).backgroundColor); if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c.slice(0, 3); }
    return [255, 255, 255];
  };
  for (const f of document.querySelectorAll('input[placeholder], textarea[placeholder]')) {
    if (!shown(f) || f.value) continue;
    const [a, b] = [lum(rgb(getComputedStyle(f, '::placeholder').color).slice(0, 3)), lum(background(f))].sort((x, y) => y - x);
    const ratio = (a + 0.05) / (b + 0.05);
    if (ratio < 4.5) out.push('contrast: the placeholder of ' + label(f) + ' is ' + ratio.toFixed(2) + ':1');
  }

  // 7. One primary action per view.
  const primaries = [...document.querySelectorAll('.primary')].filter(shown);
  if (primaries.length > 1) out.push('primary: ' + primaries.length + ' primary actions (' + primaries.map((p) => '"' + words(p.textContent) + '"').join(', ') + ')');

  // 8. Row actions name their row: no two rows of a table hold controls of one name (links: one name, two places).
  const nameOf = (el) => words(el.getAttribute('aria-label') || (el.getAttribute('aria-labelledby') || '').split(' ').map((id) => document.getElementById(id)?.textContent || '').join(' ') ||
    (el.labels && el.labels[0] ? el.labels[0].textContent : '') || el.textContent || el.value || el.title);
  for (const table of document.querySelectorAll('table')) {
    const seen = new Map();
    [...table.querySelectorAll(':scope > tbody > tr')].forEach((row, i) => {
      for (const el of row.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea')) {
        const key = nameOf(el) + (el.tagName === 'A' ? ' ' : '');
        const where = el.tagName === 'A' ? el.getAttribute('href') : '';
        const prev = seen.get(key);
        if (prev && prev.row !== i && prev.where === where && el.tagName !== 'A') out.push('row labels: two rows of ' + label(table) + ' have a control named "' + key.trim() + '"');
        if (prev && prev.row !== i && el.tagName === 'A' && prev.where !== where) out.push('row labels: two rows of ' + label(table) + ' have links named "' + key.trim() + '" to different places');
        if (!prev) seen.set(key, { row: i, where });
      }
    });
  }

  // 9. The verbs are Sign in and Sign out.
  const said = [document.title, ...[...document.querySelectorAll('button, a, h1, h2, h3, label, legend, summary, p.flash')].map((e) => e.textContent)].join(' | ');
  const wrong = said.match(/\b(log ?in|log ?out|logged (in|out))\b/i);
  if (wrong) out.push('verbs: "' + wrong[0] + '" (say Sign in / Sign out)');
  // A button names its action ("Delete 3 documents"), never "OK".
  for (const b of document.querySelectorAll('button, a.button, input[type=submit]')) if (/^ok$/i.test(words(b.textContent || b.value))) out.push('verbs: a button says "' + words(b.textContent || b.value) + '" (name the action)');

  // 10. Fields in a row line up: every single-line field and single select is drawn at one height, so labels above
  //     fields aligned at their foot sit on one line (a select was 2.5 px and a date 2 px off a text field's 35.7).
  const heights = new Map();
  for (const f of document.querySelectorAll('input:not([type=checkbox],[type=radio],[type=file],[type=hidden]), select:not([multiple])')) {
    if (!shown(f)) continue;
    const h = Math.round(f.getBoundingClientRect().height * 2) / 2;
    if (!heights.has(h)) heights.set(h, label(f) + (f.type ? '[' + f.type + ']' : ''));
  }
  if (heights.size > 1) out.push('fields: single-line fields of ' + heights.size + ' heights (' + [...heights].map(([h, f]) => f + ' ' + h + ' px').join(', ') + ')');

  // 11. The words of a button, badge or chip sit centred in it, within 1 px (visually hidden words aside): a label
  //     chip's checkbox, aligned at the top, held its words 2 px high.
  for (const el of document.querySelectorAll('.badge, .chip, button, a.button')) {
    if (!shown(el)) continue;
    const rects = [];
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const r = node.parentElement.getBoundingClientRect();
      if (!node.data.trim() || r.width <= 2 || r.height <= 2) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      rects.push(...[...range.getClientRects()].filter((x) => x.width > 0));
    }
    if (rects.length === 0) continue;
    const box = el.getBoundingClientRect();
    const off = (Math.min(...rects.map((x) => x.top)) + Math.max(...rects.map((x) => x.bottom)) - box.top - box.bottom) / 2;
    if (Math.abs(off) > 1) out.push('centred: the words of ' + label(el) + ' "' + words(el.textContent).slice(0, 30) + '" sit ' + Math.abs(off).toFixed(1) + ' px ' + (off < 0 ? 'above' : 'below') + ' its centre');
  }

  return [...new Set(out)].slice(0, 25);
})()`;

/** The design system's rules as one check: layout, targets, contrast of placeholders, primaries, row labels, verbs. */
export function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(RULES);
}

/** Every rule and axe (serious and critical), for the page as it is drawn now. */
export async function pageProblems(page: Page): Promise<string[]> {
  return [...(await layoutProblems(page)), ...(await axeViolations(page)).map((v) => `axe: ${v}`)];
}
