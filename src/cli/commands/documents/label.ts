import type { Command } from 'commander';
import { lowerKey } from '../../../core/name-spellings.js';
import { DOCUMENT } from '../../api-types.js';
import type { Context } from '../../context.js';
import { notice, writeOut } from '../../../terminal/io.js';
import { UsageError } from '../../../terminal/errors.js';
import { emitJson } from '../../output/json.js';
import { defineCommand } from '../shared/command.js';
import { eachDocument, failIfAny, nameOf, outcomeJson } from '../shared/each-document.js';
import { getDocuments } from './get-document.js';

export interface LabelOptions {
  /** The words as given: documents, then `add NAME…` and `remove NAME…` in any order. */
  words: string[];
  json: boolean;
}

export interface LabelChange {
  refs: string[];
  add: string[];
  remove: string[];
}

const EXAMPLE = 'docsearch documents label report.pdf notes.txt add unpaid "to review" remove draft';

/**
 * Splits `DOC… [add NAME…] [remove NAME…]`: the documents come before the first `add` or `remove`; a name may be
 * several, comma-separated (a label name holds no comma). A document called `add` or `remove` is named by its id.
 */
export function parseLabelWords(words: string[]): LabelChange {
  const change: LabelChange = { refs: [], add: [], remove: [] };
  // The verbs given: `add` followed by no name must not pass for "show the labels" and exit 0 having done nothing.
  const verbs = new Set<'add' | 'remove'>();
  let into: string[] = change.refs;
  for (const word of words) {
    if (word === 'add' || word === 'remove') {
      into = change[word];
      verbs.add(word);
      continue;
    }
    if (into === change.refs) into.push(word);
    else into.push(...word.split(',').map((n) => n.trim()).filter((n) => n !== ''));
  }
  if (change.refs.length === 0) throw new UsageError('name at least one document before add or remove', EXAMPLE);
  for (const verb of verbs) if (change[verb].length === 0) throw new UsageError(`${verb} needs at least one label name after it`, EXAMPLE);
  // One label in any case and either Unicode spelling (core/name-spellings.ts): a Mac's paste is decomposed.
  const both = change.add.filter((n) => change.remove.some((m) => lowerKey(m) === lowerKey(n)));
  if (both.length > 0) throw new UsageError(`label "${both[0]}" is both added and removed`, EXAMPLE);
  return change;
}

export async function run(opts: LabelOptions, ctx: Context): Promise<void> {
  const change = parseLabelWords(opts.words);
  const docs = await getDocuments(ctx, [...new Set(change.refs)]);
  const changing = change.add.length > 0 || change.remove.length > 0;
  const outcome = await eachDocument(
    docs,
    async (d) => (changing ? ctx.http().patch(`/api/v1/documents/${encodeURIComponent(d.id)}`, { labels: { add: change.add, remove: change.remove } }, { shape: DOCUMENT }) : d),
    (_, after) => {
      if (opts.json) return;
      const labels = after.labels ?? [];
      const line = `${nameOf(after)} (${after.id}): ${labels.length > 0 ? labels.join(', ') : 'no labels'}`;
      if (changing) notice(ctx.io, `labelled ${line}`);
      else writeOut(ctx.io, line);
    },
  );
  if (opts.json) await emitJson(ctx, { documents: outcome.done, ...outcomeJson(outcome) }, 'documents');
  failIfAny(ctx, outcome, docs.length);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('label', {
    summary: "add or remove documents' labels, or show them",
    description:
      'Add labels to documents (by id, sync path or file name) and remove others: `DOCUMENT… add NAME… remove NAME…`. ' +
      "A name not yet in the document's project is made there (any case matches an existing one); removing a label a document lacks does nothing. " +
      'Without add or remove, prints each document\'s labels. Editors and owners of the project set labels; viewers see them.',
    examples: [EXAMPLE, 'docsearch documents label doc_0m1abc2de3FgHiJkLmNoPq add unpaid', 'docsearch documents label invoice.pdf'],
  })
    .argument('<words...>', 'documents (ids, sync paths or file names), then add NAME… and/or remove NAME…')
    .action((words: string[]) => runF({ words, json: Boolean(ctx.globals().json) }, ctx));
}
