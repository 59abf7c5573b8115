/**
 * docs/design.md, "Rules the browser test holds": each rule the page check (./page-rules.ts, run on every page by
 * every-page.browser.test.ts) states is shown to fire on a small page that breaks it, and to stay quiet on its twin
 * that keeps it. Without this, a rule whose check had quietly stopped working would let every page pass. The pages are
 * drawn with the real stylesheet; no daemon is needed. And "Tokens": the table names the stylesheet's colour tokens,
 * and the stylesheet uses them, never a colour.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, CHROMIUM_ARGS, REPO } from '../helpers/daemon.js';
import { browserTitle, HAVE_CHROMIUM } from './browser.js';
import { pageProblems, SIZES } from './page-rules.js';

const CSS = readFileSync(join(REPO, 'src/web/static/app.css'), 'utf8');
const DOC = readFileSync(join(REPO, 'docs/design.md'), 'utf8');

describe('design tokens', () => {
  const root = /^:root \{\n([\s\S]*?)\n\}/m.exec(CSS)![1]!;
  const COLOUR = /#[0-9a-f]{3,8}\b|\b(?:rgba?|hsla?|hwb|lab|lch|oklab|oklch|color)\(|\b(?:white|black|red|green|blue|gray|grey|silver|yellow|orange)\b(?![-\w])/i;

  it('the table in design.md names every colour token the stylesheet defines, and no other', () => {
    const defined = [...root.matchAll(/^\s*(--[a-z-]+):\s*([^;]+);/gm)].filter((m) => COLOUR.test(m[2]!) || m[2]!.startsWith('light-dark(')).map((m) => m[1]!);
    const table = DOC.slice(DOC.indexOf('| token | for |'), DOC.indexOf('\n## ', DOC.indexOf('| token | for |')));
    const named = [...table.matchAll(/^\| ([^|]+) \|/gm)].flatMap((m) => [...m[1]!.matchAll(/`(--[a-z-]+)`/g)].map((t) => t[1]!));
    expect(defined.length).toBeGreaterThan(10);
    expect(named.sort()).toEqual(defined.sort());
  });

  it('outside :root the stylesheet names no colour but the exceptions design.md names, and redefines no token', () => {
    const rest = CSS.replace(root, '').replace(/\/\*[\s\S]*?\*\//g, '');
    const coloured = new Set<string>();
    for (const [, selector, body] of rest.matchAll(/([^{}]+)\{([^{}]*)\}/g)) {
      expect(body!, selector!.trim()).not.toMatch(/(^|;)\s*--[a-z-]+:/);
      if (COLOUR.test(body!)) coloured.add(selector!.trim().replace(/^\.label-[a-z]+$/, '.label-<colour>'));
    }
    // A label's own colour; black on white paper when printed; a slide's shadow; a page thumbnail's white paper.
    expect([...coloured].sort()).toEqual(['.label-<colour>', '.slide', '.thumb', 'body, .card'].sort());
    for (const words of ['`.label-<colour>`', 'printed', 'shadow', 'thumbnail']) expect(DOC.slice(DOC.indexOf('## Tokens')), `design.md's exception: ${words}`).toContain(words);
  });
});

interface Rule {
  /** The rule as design.md words it. */
  rule: string;
  /** How the check's report of it begins. */
  says: string;
  /** A page that breaks it. */
  broken: string;
  /** The same page keeping it. */
  kept: string;
}

const rows = (cell: (name: string) => string) =>
  `<div class="table-wrap"><table><thead><tr><th>Member</th><th>Actions</th></tr></thead><tbody>${['alice@example.com', 'bob@example.com'].map((n) => `<tr><td>${n}</td><td>${cell(n)}</td></tr>`).join('')}</tbody></table></div>`;

const RULES: Rule[] = [
  {
    rule: 'the page scrolls sideways',
    says: 'overflow: the page is',
    broken: '<div style="position:absolute;left:0;width:3000px;height:10px"></div><p>Text</p>',
    kept: '<div style="position:absolute;left:0;width:300px;height:10px"></div><p>Text</p>',
  },
  {
    rule: 'anything spills out of its container',
    says: 'overflow: div.inner runs',
    broken: '<div class="card" style="width:200px"><div class="inner" style="width:400px">Field notes</div></div>',
    kept: '<div class="card" style="width:200px"><div class="inner" style="width:150px">Field notes</div></div>',
  },
  {
    rule: 'a table needs to scroll at 1280 px',
    says: 'table:',
    broken: `<div class="table-wrap" style="width:300px"><table><tr><td style="white-space:nowrap">${'meadow '.repeat(40)}</td></tr></table></div>`,
    kept: `<div class="table-wrap" style="width:300px"><table><tr><td>${'meadow '.repeat(40)}</td></tr></table></div>`,
  },
  {
    rule: 'a word is broken inside a table cell',
    says: 'word broken:',
    broken: '<table style="width:200px"><tr><td style="overflow-wrap:anywhere;word-break:break-all">Hydrological observations of glaciers</td></tr></table>',
    kept: '<table style="width:200px"><tr><td>Hydrological observations of glaciers</td></tr></table>',
  },
  {
    rule: 'a time wraps',
    says: 'time wraps:',
    broken: '<p>Added <time style="display:inline-block;width:60px;white-space:normal">30 November 2026 16:44</time></p>',
    kept: '<p>Added <time>30 November 2026 16:44</time></p>',
  },
  {
    rule: 'a target is under 24×24 px with another within 24 px',
    says: 'target:',
    broken: '<p><button style="min-height:0;min-width:0;padding:0;width:16px;height:16px">a</button><button style="min-height:0;min-width:0;padding:0;width:16px;height:16px">b</button></p>',
    kept: '<p><button style="min-height:0;min-width:0;padding:0;width:16px;height:16px">a</button><span style="display:inline-block;width:40px"></span><button style="min-height:0;min-width:0;padding:0;width:16px;height:16px">b</button></p>',
  },
  {
    rule: 'a placeholder is under 4.5:1',
    says: 'contrast: the placeholder',
    broken: '<style>#q::placeholder{color:#ccc}</style><label>Search <input id="q" placeholder="Words"></label>',
    kept: '<label>Search <input id="q" placeholder="Words"></label>',
  },
  {
    rule: 'a view has more than one primary button',
    says: 'primary:',
    broken: '<form><button class="primary">Save</button> <button class="primary">Upload</button></form>',
    kept: '<form><button class="primary">Save</button> <button>Upload</button></form>',
  },
  {
    rule: 'two rows of a table have controls of the same accessible name',
    says: 'row labels:',
    broken: rows(() => '<button class="small danger">Remove</button>'),
    kept: rows((n) => `<button class="small danger" aria-label="Remove ${n} from Finance">Remove</button>`),
  },
  {
    rule: 'a page says "Log in"',
    says: 'verbs:',
    broken: '<p><a href="/login">Log in</a></p>',
    kept: '<p><a href="/login">Sign in</a></p>',
  },
  {
    rule: 'a button says "OK" instead of naming its action',
    says: 'verbs: a button says',
    broken: '<form><p>Delete 3 documents?</p><button class="danger">OK</button> <a class="button" href="/documents">Cancel</a></form>',
    kept: '<form><p>Delete 3 documents?</p><button class="danger">Delete 3 documents</button> <a class="button" href="/documents">Cancel</a></form>',
  },
  {
    rule: 'single-line fields are drawn at more than one height',
    says: 'fields:',
    broken: '<form class="filters"><label>Name contains <input type="text" name="q"></label><label>Project <select name="p" style="height:2rem"><option>All projects</option></select></label></form>',
    kept: '<form class="filters"><label>Name contains <input type="text" name="q"></label><label>Project <select name="p"><option>All projects</option></select></label></form>',
  },
  {
    rule: "a button's, badge's or chip's words sit off its centre",
    says: 'centred:',
    broken: '<ul class="chips doc-labels"><li><label class="check badge label-blue" style="align-items:flex-start"><input type="checkbox" name="label" value="unpaid"> <bdi>unpaid</bdi></label></li></ul>',
    kept: '<ul class="chips doc-labels"><li><label class="check badge label-blue"><input type="checkbox" name="label" value="unpaid"> <bdi>unpaid</bdi></label></li></ul>',
  },
  {
    rule: 'axe-core reports a serious finding (colour contrast)',
    says: 'axe: color-contrast',
    broken: '<p style="color:#bbb;background:#fff">Ready to search</p>',
    kept: '<p style="color:#333;background:#fff">Ready to search</p>',
  },
];

describe.skipIf(!HAVE_CHROMIUM)(browserTitle('each design rule fails a page that breaks it, and only that page'), () => {
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: SIZES.desk });
  });
  afterAll(async () => {
    await browser?.close();
  });

  const draw = async (body: string): Promise<string[]> => {
    await page.setContent(`<!doctype html><html lang="en"><head><title>Rule</title><style>${CSS}</style></head><body><main>${body}</main></body></html>`);
    return pageProblems(page);
  };

  for (const r of RULES) {
    it(r.rule, async () => {
      const broken = await draw(r.broken);
      expect(broken.filter((p) => p.startsWith(r.says)), `what the check said of the broken page: ${JSON.stringify(broken)}`).not.toEqual([]);
      expect(await draw(r.kept)).toEqual([]);
    });
  }
});
