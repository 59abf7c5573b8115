/**
 * The heading a result shows above its passage. A passage that is nothing but its own heading line (a section whose
 * body went to the next chunk: "Lighthouse Keeping") would show that line twice, once as where it sits and once as
 * its text: the heading path then stops at its parent. A sheet's name, already said by the citation, is not repeated
 * either. The web pages and the CLI both use it, so it lives here.
 */
import { cutUnits } from './code-points.js';

const PATH = ' > ';

/**
 * A heading longer than this is shown cut, between graphemes, with "…": a line a document calls a heading may be a
 * run of 200,000 letters (one word to the heading rules), which the CLI's column measure (string-width) took 17 s to
 * lay out, and more than its heap to cut.
 */
export const MAX_SHOWN_HEADING = 500;

const shortened = (heading: string): string => (heading.length <= MAX_SHOWN_HEADING ? heading : `${cutUnits(heading, MAX_SHOWN_HEADING - 1)}…`);

const bare = (s: string) => s.replace(/\s+/g, ' ').replace(/[\s:.]+$/, '').trim();

export function shownHeading(p: { heading?: string | null; text: string; citation?: { sheet?: string } | null }): string | null {
  if (!p.heading || p.heading === p.citation?.sheet) return null;
  const parts = p.heading.split(PATH);
  if (bare(parts.at(-1)!) !== bare(p.text)) return shortened(p.heading);
  return parts.length > 1 ? shortened(parts.slice(0, -1).join(PATH)) : null;
}
