/**
 * A result's answer: the unit of its chunk (ingest/answer-units.ts) that best matches the query, which the web, the CLI
 * and MCP show first.
 *
 * A unit's score is its meaning (cosine to the query: the unit's vector stored at ingest, or the builtin reranker's
 * stored windows) plus TERM_WEIGHT × how far the share of the query's distinct terms it holds
 * is past half (0 at half or less, 1 with them all). Without meaning the terms decide, then how often they occur, then
 * the earlier unit. TERM_WEIGHT was chosen on SciFact train's rationale sentences (`npm run bench:snippets -- --tune`;
 * docs/search.md).
 */
import type { SentenceWindow } from '../ingest/sentence-windows.js';
import type { UnitKind } from '../store/lancedb/unit-vectors.js';
import { analysedWords } from '../language/analyse.js';
import { type Term, TermMatcher } from './terms.js';

/** Weight of the query-term share against the cosine (0..1) of meaning. */
export const TERM_WEIGHT = 0.5;
/** The share of the query's terms a unit must hold past which they count with meaning (see chooseAnswer). */
export const TERM_FLOOR = 0.5;

/**
 * A neighbouring unit scored within this of the chosen one is shown with it. The model's output drifts between CPUs
 * by up to ~0.007 (test/package/upgrade-from-release measured 0.0067): a choice won by less could turn on another
 * machine, and the two sentences are as likely the answer as each other.
 */
export const NEAR_TIE = 0.01;

/** How terms weigh against meaning: TERM_WEIGHT and TERM_FLOOR unless a bench tries others. */
export interface AnswerWeights {
  weight: number;
  floor: number;
}

/** A unit as answers see it: its span and, when known, its kind (a heading is never the answer). */
export interface AnswerUnit extends SentenceWindow {
  kind?: UnitKind;
}

export interface AnswerChoice {
  /** The chosen unit, or with meaning its span and a neighbour's scored within NEAR_TIE of it. */
  unit: AnswerUnit;
  /** The chosen unit's index among the units. */
  index: number;
  /**
   * How far its score is ahead of the next candidate's (Infinity when it had none): a margin below the model's drift
   * between CPUs (~0.007) may turn on another machine. Benches and tests read it; the search does not.
   */
  margin: number;
}

/**
 * The unit that answers best. `meaning` (one cosine per unit, or absent) comes from the model; terms are the
 * query's. A heading is not chosen (unless the text is nothing else): its words count for the units under it, as
 * `context`'s (the header the chunk was embedded under: its document's title, its heading path) count for every unit.
 * Undefined only when the text has no units (it is blank). With meaning, a neighbour within NEAR_TIE of the chosen
 * unit is part of the answer (the better of two such neighbours).
 */
export function chooseAnswer(
  text: string,
  units: readonly AnswerUnit[],
  terms: readonly Term[] | QueryWords,
  meaning?: readonly number[],
  context?: string | null,
  weights: AnswerWeights = { weight: TERM_WEIGHT, floor: TERM_FLOOR },
): AnswerChoice | undefined {
  if (units.length === 0) return undefined;
  const matcher = 'count' in terms ? terms : new TermMatcher(terms);
  const found = units.map(() => ({ distinct: new Set<string>(), hits: 0 }));
  if (matcher.count > 0) {
    let u = 0;
    for (const { key, start } of matcher.find(text)) {
      while (u < units.length && start >= units[u]!.end) u++;
      if (u === units.length) break;
      if (start < units[u]!.start) continue;
      found[u]!.distinct.add(key);
      found[u]!.hits++;
    }
  }
  // The terms each unit's context holds: the chunk's header (title, heading path) for all of them, and each heading
  // line for the units after it.
  const everywhere = context && matcher.count > 0 ? matcher.find(context).map((w) => w.key) : [];
  const headed = units.map(() => new Set<string>(everywhere));
  let over = new Set<string>();
  units.forEach((u, i) => {
    if (u.kind === 'heading') over = found[i]!.distinct;
    else for (const s of over) headed[i]!.add(s);
  });
  const answers = units.some((u) => u.kind !== 'heading');
  const withMeaning = meaning !== undefined && meaning.length === units.length;
  let best = -1;
  let bestKey = [-Infinity, -Infinity];
  let runnerUp = -Infinity;
  const scores = units.map(() => -Infinity);
  units.forEach((u, i) => {
    if (answers && u.kind === 'heading') return;
    const distinct = new Set([...found[i]!.distinct, ...headed[i]!]);
    const share = matcher.count ? distinct.size / matcher.count : 0;
    // With meaning, only a unit holding more than half the query's words gains by them: a word or two in common is
    // what filler around an answer has too (an office handbook says "office" everywhere), and it outweighed meaning.
    const key = withMeaning ? [meaning[i]! + weights.weight * Math.max(0, (share - weights.floor) / (1 - weights.floor)), 0] : [share, found[i]!.hits];
    scores[i] = key[0]!;
    if (best < 0 || key[0]! > bestKey[0]! || (key[0] === bestKey[0] && key[1]! > bestKey[1]!)) {
      runnerUp = bestKey[0]!;
      best = i;
      bestKey = key;
    } else runnerUp = Math.max(runnerUp, key[0]!);
  });
  let unit = units[best]!;
  const near = withMeaning ? [best - 1, best + 1].filter((j) => scores[j] !== undefined && scores[j] >= bestKey[0]! - NEAR_TIE) : [];
  const neighbour = near.length ? units[near.reduce((a, b) => (scores[b]! > scores[a]! ? b : a))]! : undefined;
  if (neighbour) unit = { ...unit, start: Math.min(unit.start, neighbour.start), end: Math.max(unit.end, neighbour.end) };
  return { unit, index: best, margin: bestKey[0]! - runnerUp };
}

/**
 * The query's words as an answer looks for them in a text: how many distinct ones the query has, and the words of a
 * text that are one of them (its offset and which one: a key per query word). In English (a TermMatcher, terms.ts) a
 * word matches a query term by its surface form or its light stem.
 */
export interface QueryWords {
  count: number;
  find(text: string): { start: number; key: string }[];
}

/**
 * Any other language: the query's and the text's words as the keyword index reads them in the text's language
 * (language/analyse.ts: its stems, compound parts, umlaut spellings, Chinese and Japanese words), so "Fahrrädern"
 * answers "Fahrrad" and 借阅 is found inside 借阅规则's text. A text word holds the first query word one of its
 * forms is a form of.
 */
export function analysedQueryWords(query: string, language: string): QueryWords {
  const owner = new Map<string, string>();
  let count = 0;
  for (const w of analysedWords(query, language)) {
    if (w.forms.every((f) => owner.has(f))) continue;
    const key = String(count++);
    for (const f of w.forms) if (!owner.has(f)) owner.set(f, key);
  }
  return {
    count,
    find: (text) =>
      analysedWords(text, language).flatMap((w) => {
        for (const f of w.forms) {
          const key = owner.get(f);
          if (key !== undefined) return [{ start: w.start, key }];
        }
        return [];
      }),
  };
}

/**
 * Meaning scores for `units` from windows scored elsewhere (the builtin reranker's stored windows): each unit takes
 * the score of the window it lies in. Undefined when some unit lies in none (the windows were cut differently).
 */
export function scoresFromWindows(units: readonly SentenceWindow[], windows: readonly { start: number; end: number; score: number }[]): number[] | undefined {
  const out: number[] = [];
  for (const u of units) {
    const w = windows.find((x) => u.start >= x.start && u.end <= x.end);
    if (!w) return undefined;
    out.push(w.score);
  }
  return out;
}
