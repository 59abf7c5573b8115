/**
 * The filter language (docs/api.md#filters): one set of names for the search body's `filters`, the document list's
 * query parameters, MCP's `filters` and the CLI's flags, so each surface narrows the same way and refuses the same
 * mistakes with the same words. This file is the wire schema and its normal form; the stores turn the normal form into
 * predicates (SQL for lists, LanceDB's prefilter for search), and search/filters.ts resolves names (e-mails, label
 * names, metadata ranges) against the caller's library first.
 */
import { z } from 'zod';
import { type DocumentType, TYPE_FILTER_NAMES } from './document-types.js';
import { FACETS } from './facet-names.js';
import { METADATA_OPERATORS } from './metadata-operators.js';
import { MOMENT, MOMENT_FORM, momentProblem, momentSpan } from './moment.js';
import { labelTextProblem, MAX_FILTER_VALUES, MAX_LABEL_CHARS } from './label-name.js';
import { MAX_EMAIL_CHARS } from './name-limits.js';
import { spellings } from './name-spellings.js';

/** Values one field may list (types, uploaders, labels, a metadata `$in` …). */
export { MAX_FILTER_VALUES, MAX_LABEL_CHARS } from './label-name.js';
/** Longer metadata values are kept, but not as filter values (docs/api.md#filters). */
export const MAX_METADATA_VALUE_CHARS = 256;
export const MAX_METADATA_KEY_CHARS = 128;
export const MAX_METADATA_CONDITIONS = 20;

export type Scalar = string | number | boolean | null;

/** Metadata operators: `{key: value}` is `$eq`. */

/**
 * A label's name: what people type, so trimmed, readable, without commas (lists of names are comma-separated), and
 * composed (NFC: a name from a Mac's file or folder comes decomposed; core/name-spellings.ts).
 */
export const LabelName = z
  .string()
  .trim()
  .normalize('NFC')
  .min(1)
  .max(MAX_LABEL_CHARS)
  .superRefine((value, ctx) => {
    const problem = labelTextProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** A metadata key: a dotted path (`email.from`), each part non-empty, no controls. */
export const METADATA_KEY = /^[^.\u0000-\u001f\u007f]+(\.[^.\u0000-\u001f\u007f]+)*$/;
const MetadataKey = z.string().min(1).max(MAX_METADATA_KEY_CHARS).regex(METADATA_KEY, 'must be a dotted path of non-empty parts (email.from)');

const ScalarSchema = z.union([z.string().max(MAX_METADATA_VALUE_CHARS), z.number().finite(), z.boolean(), z.null()]);
const Bound = z.union([z.number().finite(), z.string().regex(MOMENT, 'must be a number, or a date (2026-03-31) or RFC 3339 time')]);

const Operators = z
  .strictObject({
    $eq: ScalarSchema.optional().describe('equal to this value'),
    $in: z.array(ScalarSchema).min(1).max(MAX_FILTER_VALUES).optional().describe('equal to one of these values'),
    $gt: Bound.optional().describe('greater than this number, or after this date (a day: from the next one)'),
    $gte: Bound.optional().describe('at least this number, or at or after this date'),
    $lt: Bound.optional().describe('less than this number, or before this date'),
    $lte: Bound.optional().describe('at most this number, or at or before this date (a day: to its end)'),
    $exists: z.boolean().optional().describe('true: the document has the key; false: it has not'),
  })
  .superRefine((ops, ctx) => {
    if (Object.keys(ops).length === 0) ctx.addIssue({ code: 'custom', message: `needs an operator: ${METADATA_OPERATORS.join(', ')}` });
    const bounds = (['$gt', '$gte', '$lt', '$lte'] as const).filter((op) => ops[op] !== undefined);
    const kinds = new Set(bounds.map((op) => typeof ops[op]));
    if (kinds.size > 1) ctx.addIssue({ code: 'custom', message: `${bounds.join(' and ')} must all be numbers or all be dates` });
    for (const op of bounds) {
      const v = ops[op];
      const problem = typeof v === 'string' && MOMENT.test(v) ? momentProblem(v) : undefined;
      if (problem) ctx.addIssue({ code: 'custom', path: [op], message: problem });
    }
  });

const Condition = z.union([ScalarSchema, Operators], {
  error: () => `must be a value (string, number, true, false or null) or an object of operators (${METADATA_OPERATORS.join(', ')})`,
});

const oneOrMore = <T extends z.ZodType>(item: T) =>
  z.union([item, z.array(item).min(1).max(MAX_FILTER_VALUES)], { error: () => `must be one value or a list of 1 to ${MAX_FILTER_VALUES}` });

const TypeName = z
  .string()
  .trim()
  .min(1)
  .max(40)
  .superRefine((name, ctx) => {
    if (!(name.toLowerCase() in TYPE_FILTER_NAMES)) ctx.addIssue({ code: 'custom', message: `unknown type "${name}": one of ${Object.keys(TYPE_FILTER_NAMES).join(', ')}` });
  });

/** The pattern (MOMENT_FORM, in the OpenAPI document too), then whether the day and time are real. */
const Moment = z
  .string()
  .max(40)
  .regex(MOMENT, MOMENT_FORM)
  .superRefine((v, ctx) => {
    const problem = MOMENT.test(v) ? momentProblem(v) : undefined;
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

const LanguageCode = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z]{2,3}$/, 'must be a language code (ISO 639-1: en, de, zh …; und: undetermined)');
const Email = z.string().trim().min(3).max(MAX_EMAIL_CHARS).regex(/^[^\s@]+@[^\s@]+$/, 'must be an e-mail address');
const Id = z.string().min(1).max(100);

export const Filters = z
  .strictObject({
    type: oneOrMore(TypeName).optional().describe(`document types, any of: ${Object.keys(TYPE_FILTER_NAMES).join(', ')} (any case)`),
    uploaded_since: Moment.optional().describe('uploaded at or after this date (2026-03-31, 00:00 UTC) or RFC 3339 time'),
    uploaded_before: Moment.optional().describe('uploaded before this date or time'),
    path_prefix: z.string().min(1).max(1024).optional().describe('upload or sync path starts with this (contracts/ finds contracts/2025/a.pdf)'),
    uploaded_by: oneOrMore(Email).optional().describe('uploaded by this person (e-mail), any of'),
    source_id: oneOrMore(Id).optional().describe('kept current by this source, any of'),
    labels: oneOrMore(LabelName).optional().describe('labelled with every one of these (label names, any case)'),
    language: oneOrMore(LanguageCode)
      .optional()
      .describe('in one of these languages (ISO 639-1, "und": none could be told): a search keeps the passages in it, a list the documents most of whose passages are'),
    metadata: z
      .record(MetadataKey, Condition)
      .refine((m) => Object.keys(m).length <= MAX_METADATA_CONDITIONS, `must have at most ${MAX_METADATA_CONDITIONS} keys`)
      .optional()
      .describe(
        'by the documents\' metadata, each key a dotted path: {key: value} equal, {key: {"$in": [...]}}, {key: {"$gte": x, "$lte": y}} for numbers and dates, {key: {"$exists": true}}; every key must hold',
      ),
  })
  .meta({ id: 'Filters' })
  .describe('narrow to documents that match every field given (docs/api.md#filters)');

export type FiltersInput = z.input<typeof Filters>;
export type FiltersBody = z.output<typeof Filters>;

/** A metadata condition in normal form: several on one key all hold. */
export type MetadataCondition =
  | { key: string; op: 'in'; values: Scalar[] }
  | { key: string; op: 'range'; kind: 'number' | 'moment'; gt?: number; gte?: number; lt?: number; lte?: number }
  | { key: string; op: 'exists'; exists: boolean };

/** Filters in normal form: lists for every multi-valued field, types as content types, moments as epoch ms. */
export interface DocumentFilters {
  contentTypes?: DocumentType[];
  uploadedFrom?: number;
  uploadedBefore?: number;
  pathPrefix?: string;
  /** Uploaders' e-mails (lowercase). */
  uploadedBy?: string[];
  sourceIds?: string[];
  /** Label names (as given): the document carries each. */
  labels?: string[];
  /** Language codes (lowercase). */
  languages?: string[];
  metadata?: MetadataCondition[];
}

const list = <T>(v: T | T[] | undefined): T[] | undefined => (v === undefined ? undefined : [...new Set(Array.isArray(v) ? v : [v])]);

/**
 * Text values in either Unicode spelling (core/name-spellings.ts): metadata is kept as sent or as a file had it,
 * and "Müller" typed matches "Müller" from a Mac.
 */
const eitherSpelling = (values: readonly Scalar[]): Scalar[] => [...new Set(values.flatMap((v): Scalar[] => (typeof v === 'string' ? spellings(v) : [v])))];

function metadataConditions(key: string, c: z.output<typeof Condition>): MetadataCondition[] {
  if (c === null || typeof c !== 'object') return [{ key, op: 'in', values: eitherSpelling([c]) }];
  const out: MetadataCondition[] = [];
  if (c.$eq !== undefined) out.push({ key, op: 'in', values: eitherSpelling([c.$eq]) });
  if (c.$in) out.push({ key, op: 'in', values: eitherSpelling(c.$in) });
  const bounds = (['$gt', '$gte', '$lt', '$lte'] as const).filter((op) => c[op] !== undefined);
  if (bounds.length > 0) {
    const kind = typeof c[bounds[0]!] === 'number' ? 'number' : 'moment';
    // A date bound takes in what it names (core/moment.ts momentSpan): `$lte: "2025-01-31"` the whole of that day.
    const at = (op: (typeof bounds)[number], v: number | string) => {
      if (typeof v === 'number') return v;
      const span = momentSpan(v)!;
      return op === '$gte' || op === '$lt' ? span.from : span.to - 1;
    };
    const range: MetadataCondition = { key, op: 'range', kind };
    for (const op of bounds) range[op.slice(1) as 'gt' | 'gte' | 'lt' | 'lte'] = at(op, c[op]!);
    out.push(range);
  }
  if (c.$exists !== undefined) out.push({ key, op: 'exists', exists: c.$exists });
  return out;
}

/** Validated filters (the output of `Filters`) in normal form; undefined when they narrow nothing. */
export function normalFilters(f: FiltersBody | undefined): DocumentFilters | undefined {
  if (!f) return undefined;
  const out: DocumentFilters = {};
  const types = list(f.type);
  if (types) out.contentTypes = [...new Set(types.map((t) => TYPE_FILTER_NAMES[t.toLowerCase()]!))];
  if (f.uploaded_since !== undefined) out.uploadedFrom = momentSpan(f.uploaded_since)!.from;
  if (f.uploaded_before !== undefined) out.uploadedBefore = momentSpan(f.uploaded_before)!.from;
  if (f.path_prefix !== undefined) out.pathPrefix = f.path_prefix;
  const by = list(f.uploaded_by);
  if (by) out.uploadedBy = [...new Set(by.map((e) => e.toLowerCase()))];
  const sources = list(f.source_id);
  if (sources) out.sourceIds = sources;
  const labels = list(f.labels);
  if (labels) out.labels = labels;
  const languages = list(f.language);
  if (languages) out.languages = languages;
  if (f.metadata) out.metadata = Object.entries(f.metadata).flatMap(([key, c]) => metadataConditions(key, c));
  return Object.keys(out).length > 0 ? out : undefined;
}

export const MAX_FACETS = 20;

export const FacetName = z
  .string()
  .max(MAX_METADATA_KEY_CHARS + 9)
  .superRefine((name, ctx) => {
    const ok = (FACETS as readonly string[]).includes(name) || (name.startsWith('metadata.') && METADATA_KEY.test(name.slice('metadata.'.length)));
    if (!ok) ctx.addIssue({ code: 'custom', message: `unknown facet "${name}": one of ${FACETS.join(', ')}, or metadata.<key>` });
  });

export const Facets = z
  .array(FacetName)
  .max(MAX_FACETS)
  .describe(`count the whole result list by these (${FACETS.join(', ')}, metadata.<key>): \`facets\` in the answer (docs/api.md#facets)`);

/** A metadata value as filters compare it: its JSON text (`"ops"`, `2020`, `true`, `null`). */
export const canonicalValue = (v: Scalar): string => JSON.stringify(v);
