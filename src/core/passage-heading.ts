/**
 * The heading a result shows above its passage. A passage that is nothing but its own heading line (a section whose
 * body went to the next chunk: "Lighthouse Keeping") would show that line twice, once as where it sits and once as
 * its text: the heading path then stops at its parent. A sheet's name, already said by the citation, is not repeated
 * either. The web pages and the CLI both use it, so it lives here.
 */
const PATH = ' > ';

const bare = (s: string) => s.replace(/\s+/g, ' ').replace(/[\s:.]+$/, '').trim();

export function shownHeading(p: { heading?: string | null; text: string; citation?: { sheet?: string } | null }): string | null {
  if (!p.heading || p.heading === p.citation?.sheet) return null;
  const parts = p.heading.split(PATH);
  if (bare(parts.at(-1)!) !== bare(p.text)) return p.heading;
  return parts.length > 1 ? parts.slice(0, -1).join(PATH) : null;
}
