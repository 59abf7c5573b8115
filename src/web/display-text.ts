import unhomoglyph from 'unhomoglyph';

/**
 * How pages show text that others wrote — documents, e-mail subjects, names applications give themselves — so that
 * it cannot pass for something else. Escaping (html.ts) keeps it from being markup; this keeps it from misleading.
 */

// Explicit embeddings and overrides (LRE, RLE, PDF, LRO, RLO) and isolates (LRI, RLI, FSI, PDI). One RLO in an e-mail
// subject turns "fdp.exe" into "exe.pdf" and reverses whatever follows it in the same paragraph (the From/To line).
const DIRECTIONAL_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` with each explicit directional control shown as U+FFFD instead of acting: one character for one, so
 * offsets into the text (highlights) still hold. The implicit direction of right-to-left scripts is untouched.
 */
export function withoutDirectionalControls(text: string): string {
  return text.replace(DIRECTIONAL_CONTROLS, '\ufffd');
}

/** Alphabets with letters that look like Latin ones: a name mixing two of them is how one imitates another name. */
const LOOKALIKE_SCRIPTS = ['Latin', 'Cyrillic', 'Greek', 'Armenian', 'Cherokee'] as const;
const SCRIPT_OF = LOOKALIKE_SCRIPTS.map((name) => ({ name, re: new RegExp(`\\p{Script=${name}}`, 'u') }));
const MARKS_BEYOND_TWO = /(\p{M}{2})\p{M}+/gu;
const INVISIBLE_OUTSIDE_EMOJI = /(\p{Extended_Pictographic}[\ufe0e\ufe0f]?(?:\u200d\p{Extended_Pictographic}[\ufe0e\ufe0f]?)*)|\p{Default_Ignorable_Code_Point}/gu;

/**
 * What about an application's name could mislead on the consent page, as phrases ("mixes Latin and Cyrillic
 * letters"), or none. The look-alike test is Unicode's confusables skeleton (UTS #39, via `unhomoglyph`): a name
 * not in ASCII whose skeleton is ASCII only looks like the Latin name it spells.
 */
export function nameConcerns(name: string): string[] {
  const concerns: string[] = [];
  const visible = withoutInvisibles(name);
  if (visible !== name) concerns.push('contains invisible characters');
  const scripts = SCRIPT_OF.filter((s) => [...visible].some((c) => /\p{L}/u.test(c) && s.re.test(c))).map((s) => s.name);
  if (scripts.length > 1) concerns.push(`mixes ${scripts.join(' and ')} letters`);
  else if (/[^\x00-\x7f]/.test(visible)) {
    const skeleton = unhomoglyph(visible.normalize('NFKC'));
    if (/^[\x00-\x7f]*$/.test(skeleton)) concerns.push(`uses letters that only look like Latin ones (it reads as “${skeleton}”)`);
  }
  if (/\p{M}{3}/u.test(name)) concerns.push('stacks many marks on one letter');
  return concerns;
}

/** `text` without invisible characters, but for those emoji are made of (joiners, presentation selectors: "👨‍💻", "✏️"). */
function withoutInvisibles(text: string): string {
  return text.replace(INVISIBLE_OUTSIDE_EMOJI, (match, emoji: string | undefined) => emoji ?? '');
}

/** A name as a page shows it: no invisible characters, at most two marks on a letter, no directional controls. */
export function displayName(name: string): string {
  return withoutDirectionalControls(withoutInvisibles(name).replace(MARKS_BEYOND_TWO, '$1'));
}
