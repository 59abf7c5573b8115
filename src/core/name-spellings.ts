import { foldAscii } from './name-order.js';

/**
 * The two Unicode spellings of one name: composed (NFC, "Caf\u00e9": what a keyboard and a browser's form give, and
 * what docsearch stores names in) and decomposed (NFD, "Cafe\u0301": what macOS writes, and what reaches us from
 * its folders, WebDAV, S3 keys and zip archives). They look the same, so a lookup matches either: text stored before
 * names were composed on write, or kept as sent (upload paths, metadata), is found by the name typed in the other.
 * Mixed spellings (some letters composed, some not) come from no system we know of and match only these two.
 */
export const spellings = (name: string): string[] => [...new Set([name.normalize('NFC'), name.normalize('NFD')])];

/** A name as the stores compare it ("any case" of A–Z, either spelling): for comparing in code. */
export const nameKey = (name: string): string => foldAscii(name.normalize('NFC'));

/**
 * A name or e-mail address as a comparison that lowers case with JavaScript (`toLowerCase`, every script) sees it,
 * either spelling one key: the sign-in lockout's count per address, the CLI's matches in lists the server sent.
 */
export const lowerKey = (name: string): string => name.normalize('NFC').toLowerCase();
