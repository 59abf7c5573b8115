/** What the PPTX and XLSX parsers share: OOXML relationship parts (`_rels/*.rels`) resolved to part names. */
import { posix } from 'node:path';
import { walkXml } from './xml.js';

/** Relationship id → the target's part name, for the part `partName` (e.g. "ppt/presentation.xml"). */
export function relationships(parts: Map<string, Buffer>, partName: string, noun: string): Map<string, string> {
  const dir = posix.dirname(partName);
  const rels = parts.get(posix.join(dir, '_rels', `${posix.basename(partName)}.rels`));
  const out = new Map<string, string>();
  if (!rels) return out;
  walkXml(rels, noun, {
    open(name, attrs) {
      if (name !== 'Relationship' || !attrs.Id || !attrs.Target || attrs.TargetMode === 'External') return;
      out.set(attrs.Id, attrs.Target.startsWith('/') ? attrs.Target.slice(1) : posix.normalize(posix.join(dir, attrs.Target)));
    },
  });
  return out;
}
