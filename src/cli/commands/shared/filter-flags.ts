/**
 * The filter language (core/filters.ts, docs/api.md#filters) as command-line flags, the same on `search` and
 * `documents list`: each flag a field of `filters`, repeatable where the field takes a list, and `--meta` the
 * metadata expressions of core/filter-params.ts (`team=ops`, `year>=2020`, `reviewed`, `!draft`). The server
 * validates them and names a bad one.
 */
import type { Command } from 'commander';
import { addMetaExpression } from '../../../core/filter-params.js';
import type { FiltersInput } from '../../../core/filters.js';
import { UsageError } from '../../../terminal/errors.js';
import { collect } from './command.js';

export interface FilterFlags {
  type: string[];
  since?: string;
  before?: string;
  pathPrefix?: string;
  by: string[];
  source: string[];
  label: string[];
  lang: string[];
  meta: string[];
}

/** Adds the filter flags to a command. */
export function addFilterFlags(cmd: Command): Command {
  return cmd
    .option('--type <type>', 'only documents of this type (pdf, docx, markdown, email …); repeatable: any of', collect, [])
    .option('--since <date>', 'only documents uploaded at or after this day (2026-03-31) or RFC 3339 time')
    .option('--before <date>', 'only documents uploaded before this day or time')
    .option('--path-prefix <prefix>', 'only documents whose upload or sync path starts with this (contracts/)')
    .option('--by <email>', 'only documents this person uploaded; repeatable: any of', collect, [])
    .option('--source <id>', 'only documents this source keeps current; repeatable: any of', collect, [])
    .option('--label <name>', 'only documents with this label; repeatable: all of them', collect, [])
    .option('--lang <code>', 'only this language (ISO 639-1: en, de …); repeatable: any of', collect, [])
    .option('--meta <expr>', 'by metadata: KEY=VALUE (repeated for a key: any of), KEY>=VALUE, KEY<VALUE …, KEY (has it), !KEY (has not); repeatable: all hold', collect, []);
}

const oneOrList = (values: string[]): string | string[] | undefined => (values.length === 0 ? undefined : values.length === 1 ? values[0] : values);

/** The flags as the API's `filters`; undefined when none is given. */
export function filtersFromFlags(f: FilterFlags): FiltersInput | undefined {
  const metadata: Record<string, unknown> = {};
  for (const expression of f.meta) {
    try {
      addMetaExpression(metadata, expression);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  const out: Record<string, unknown> = {
    type: oneOrList(f.type),
    uploaded_since: f.since,
    uploaded_before: f.before,
    path_prefix: f.pathPrefix,
    uploaded_by: oneOrList(f.by),
    source_id: oneOrList(f.source),
    labels: oneOrList(f.label),
    language: oneOrList(f.lang),
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
  };
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return Object.keys(out).length > 0 ? (out as FiltersInput) : undefined;
}
