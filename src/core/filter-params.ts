/**
 * The filter language (core/filters.ts) in a URL's query and on a command line: `GET /api/v1/documents`, the web
 * pages' links and the CLI's flags take the same names as the search body's `filters`, so a filter written one way
 * reads the same in another.
 *
 * - Lists are comma-separated or repeated: `type=pdf,docx`, `labels=unpaid&labels=2025`.
 * - `metadata` is the body's JSON object; `metadata.<key>=<value>` is a shorthand for equality (repeated: any of),
 *   and `metadata.<key>.$gte=<value>` for an operator. A value in a URL or a flag is text, so it matches the text and
 *   the number, true, false or null it spells (`metadata.year=2020` finds 2020 and "2020").
 */
import { invalidRequest } from './errors.js';
import type { FiltersInput, Scalar } from './filters.js';
import { METADATA_OPERATORS } from './metadata-operators.js';

/** The query parameters that are filters (besides `metadata.<key>`). */
export const FILTER_PARAMS = ['type', 'uploaded_since', 'uploaded_before', 'path_prefix', 'uploaded_by', 'source_id', 'labels', 'language', 'metadata'] as const;

const LISTS = new Set(['type', 'uploaded_by', 'source_id', 'labels', 'language']);

export const isFilterParam = (name: string): boolean => (FILTER_PARAMS as readonly string[]).includes(name) || name.startsWith('metadata.');

type Params = Record<string, string | string[] | undefined>;

const all = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** What a value written as text spells: a number, true, false, null, or the text itself. */
export function spelledScalar(text: string): Scalar {
  if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text)) return Number(text);
  if (text === 'true' || text === 'false') return text === 'true';
  if (text === 'null') return null;
  return text;
}

/** The values a text matches in an equality: itself, and what it spells when that differs. */
const textOrSpelled = (text: string): Scalar[] => {
  const spelled = spelledScalar(text);
  return spelled === text ? [text] : [text, spelled];
};

type Operators = Partial<Record<(typeof METADATA_OPERATORS)[number], unknown>>;

/**
 * `__proto__` as a key reaches Object's prototype, shared by every object in the process, instead of a key of its own
 * (one such URL once set `$in` on every object and ended the daemon): refused, as JSON bodies refuse it (server/api/json-body.ts).
 */
function refuseProto(key: string, where: string): void {
  if (key === '__proto__') throw invalidRequest(`${where}: the key "__proto__" is not accepted`);
}

function addCondition(metadata: Record<string, unknown>, key: string, op: (typeof METADATA_OPERATORS)[number], text: string, where: string): void {
  refuseProto(key, where);
  // Its own conditions only: `constructor` is a key like any other, not Object's function.
  const current = Object.hasOwn(metadata, key) ? metadata[key] : undefined;
  const ops: Operators = current !== null && typeof current === 'object' && !Array.isArray(current) ? (current as Operators) : {};
  if (op === '$eq' || op === '$in') {
    const values = op === '$in' ? text.split(',').flatMap(textOrSpelled) : textOrSpelled(text);
    ops.$in = [...((ops.$in as Scalar[] | undefined) ?? []), ...values];
  } else if (op === '$exists') {
    if (text !== 'true' && text !== 'false') throw invalidRequest(`${where}: must be true or false`);
    ops.$exists = text === 'true';
  } else {
    const n = spelledScalar(text);
    ops[op] = typeof n === 'number' ? n : text;
  }
  metadata[key] = ops;
}

/**
 * The filters of a URL query (parameters that are not filters are left alone), unvalidated: parse with `Filters`.
 * Undefined when there are none.
 */
/** A `metadata.<key>[.$op]` parameter's key and operator (`$eq` when it names none). */
export function metadataParamParts(name: string): [key: string, op: string] {
  const path = name.slice('metadata.'.length);
  const dollar = path.lastIndexOf('.$');
  return dollar >= 0 ? [path.slice(0, dollar), path.slice(dollar + 1)] : [path, '$eq'];
}

export function filtersFromParams(params: Params): FiltersInput | undefined {
  const out: Record<string, unknown> = {};
  const metadata: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(params)) {
    const values = all(raw);
    if (values.length === 0) continue;
    if (name === 'metadata') {
      for (const v of values) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(v);
        } catch {
          throw invalidRequest('query.metadata: must be a JSON object ({"team": "ops"}); or use metadata.<key>=<value>');
        }
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalidRequest('query.metadata: must be a JSON object ({"team": "ops"})');
        for (const key of Object.keys(parsed)) refuseProto(key, 'query.metadata');
        Object.assign(metadata, parsed);
      }
    } else if (name.startsWith('metadata.')) {
      const [key, op] = metadataParamParts(name);
      if (!(METADATA_OPERATORS as readonly string[]).includes(op)) throw invalidRequest(`query.${name}: unknown operator "${op}": one of ${METADATA_OPERATORS.join(', ')}`);
      for (const v of values) addCondition(metadata, key, op as (typeof METADATA_OPERATORS)[number], v, `query.${name}`);
    } else if (LISTS.has(name)) {
      const list = values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
      // One value as itself, so an error names the parameter (`query.type`, not `query.type.0`).
      out[name] = list.length === 1 ? list[0] : list;
    } else if ((FILTER_PARAMS as readonly string[]).includes(name)) {
      // A one-value filter sent twice stays a list, which the schema refuses ("is given 2 times"): never a guess.
      out[name] = values.length === 1 ? values[0] : values;
    }
  }
  if (Object.keys(metadata).length > 0) out.metadata = metadata;
  return Object.keys(out).length > 0 ? (out as FiltersInput) : undefined;
}

/** Filters as query parameters (the inverse of `filtersFromParams`): lists comma-joined, metadata as its JSON. */
export function filtersToParams(f: FiltersInput | undefined): [string, string][] {
  if (!f) return [];
  const out: [string, string][] = [];
  for (const name of FILTER_PARAMS) {
    const v = (f as Record<string, unknown>)[name];
    if (v === undefined) continue;
    if (name === 'metadata') out.push([name, JSON.stringify(v)]);
    else out.push([name, Array.isArray(v) ? v.join(',') : String(v)]);
  }
  return out;
}

const META_COMPARISON = /^([^=<>!]+?)\s*(>=|<=|>|<|=)\s*(.*)$/s;
const META_KEY_ALONE = /^(!)?\s*([^=<>!]+)$/s;

/**
 * A CLI `--meta` expression added to a metadata filter: `team=ops` (equal; repeated for one key: any of),
 * `year>=2020`, `date<2025-01-01`, `repo` (has the key), `!draft` (has not). Throws a message naming it.
 */
export function addMetaExpression(metadata: Record<string, unknown>, expression: string): void {
  const text = expression.trim();
  const usage = `--meta "${expression}": expected KEY=VALUE, KEY>=VALUE, KEY<VALUE …, KEY or !KEY`;
  const alone = META_KEY_ALONE.exec(text);
  if (alone) {
    addCondition(metadata, alone[2]!.trim(), '$exists', alone[1] ? 'false' : 'true', `--meta ${expression}`);
    return;
  }
  if (text.startsWith('!')) throw new Error(`--meta "${expression}": "!" goes only before a key alone (!KEY: has not the key)`);
  const m = META_COMPARISON.exec(text);
  const key = m?.[1]?.trim() ?? '';
  if (!m || !key) throw new Error(usage);
  const [, , op, value] = m;
  const ops = { '=': '$eq', '>=': '$gte', '<=': '$lte', '>': '$gt', '<': '$lt' } as const;
  addCondition(metadata, key, ops[op as keyof typeof ops], value ?? '', `--meta ${expression}`);
}
