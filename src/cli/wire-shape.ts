/**
 * What the CLI reads of an answer, checked before it reads it: a server that answers 200 with JSON of another shape
 * (a proxy's `{"ok":true}`, another service on the port, `[]`) is named as not answering like docsearch, instead of a
 * command failing later on a missing field with JavaScript's own words. A shape names only the fields the client
 * relies on (newer servers add fields; optional ones are not named), so it says "this is docsearch's answer", not
 * "this is all of it"; the types in api-types.ts say the rest.
 */
import { CliError, EXIT } from '../terminal/errors.js';

type Kind = 'string' | 'number' | 'boolean' | 'object';

/** A field's kind, a list of items of one spec (`[spec]`), or an object with these fields. */
export type Spec = Kind | readonly [Spec] | Fields;

/** An object's fields and their specs (a field left undefined is not checked). */
export type Fields = { readonly [field: string]: Spec | undefined };

/** An object answer's spec, carrying the type the answer is read as. */
export interface WireShape<T> {
  readonly fields: Fields;
  /** Never set: ties the type to the spec, so `get(path, shape)` returns it. */
  readonly type?: T;
}

/** The shape of an object answer of type `T`: its named fields must be there, of their kind. */
export const shape = <T>(fields: { readonly [K in keyof T]?: Spec }): WireShape<T> => ({ fields });

const what = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'an object' : `a ${typeof v}`);

const wanted = (spec: Spec): string => (typeof spec === 'string' ? (spec === 'object' ? 'an object' : `a ${spec}`) : Array.isArray(spec) ? 'a list' : 'an object');

/** The first way `value` is not `spec` (`no "projects"`, `"projects[0].id" is null, not a string`), or undefined when it fits. */
function problem(value: unknown, spec: Spec, where: string): string | undefined {
  const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
  if (typeof spec === 'string') {
    if (spec === 'object' ? isObject : typeof value === spec) return undefined;
  } else if (Array.isArray(spec)) {
    if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) {
        const p = problem(item, (spec as readonly [Spec])[0], `${where}[${i}]`);
        if (p) return p;
      }
      return undefined;
    }
  } else if (isObject) {
    for (const [field, inner] of Object.entries(spec)) {
      if (inner === undefined) continue;
      const at = where ? `${where}.${field}` : field;
      const v = (value as Record<string, unknown>)[field];
      if (v === undefined) return `no "${at}"`;
      const p = problem(v, inner, at);
      if (p) return p;
    }
    return undefined;
  }
  return `${where ? `"${where}" is` : 'the answer is'} ${what(value)}, not ${wanted(spec)}`;
}

/** The answer to `request` (`GET /api/v1/projects`) as `shape` says, or the error that `server` is not answering like docsearch. */
export function asShaped<T>(body: unknown, shape: WireShape<T>, request: string, server: string): T {
  const p = problem(body, shape.fields, '');
  if (p) throw notDocsearch(request, server, p);
  return body as T;
}

/** An answer docsearch does not give (`why`: not JSON, `no "projects"`): the server at that address is likely something else. */
export const notDocsearch = (request: string, server: string, why: string): NotDocsearchError =>
  new NotDocsearchError(`${request}: ${server} did not answer as a docsearch server does (${why})`, `is ${server} a docsearch server? A proxy or another service may be answering at that address`);

/** An answer that is not docsearch's: the server was reached (not offline), but is likely not docsearch. */
export class NotDocsearchError extends CliError {
  override name = 'NotDocsearchError';
  override readonly code = 'not_docsearch';
  constructor(message: string, hint: string) {
    super(message, EXIT.error, hint);
  }
}
