import { readdirSync } from 'node:fs';

/**
 * The folder ext4 (and ext2/3) makes at a file system's root for fsck: a fresh mount point holds it and nothing else,
 * and it is no one's data.
 */
export const LOST_FOUND = 'lost+found';

/** What `dir` holds but `lost+found`, sorted; none when `dir` is not there. */
export function entriesOf(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names.filter((n) => n !== LOST_FOUND).sort();
}

/** `names` as a message shows them: the first few, and how many more. */
export function someOf(names: string[], shown = 3): string {
  const head = names.slice(0, shown).join(', ');
  return names.length > shown ? `${head} and ${names.length - shown} more` : head;
}
