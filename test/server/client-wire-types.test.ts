import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { JSON_FIELDS } from '../../src/cli/api-types.js';
import { buildOpenApi } from '../../src/server/openapi.js';
import { apiRoutes } from '../../src/server/routes.js';

/**
 * The clients' hand-written wire types (src/cli/api-types.ts, src/mcp/library.ts: cli/ and mcp/ may not import the
 * server's zod schemas) checked against the OpenAPI document the daemon serves, so a change on either side that
 * makes them disagree fails `npm test`. Checked rather than generated: the clients read a subset of each shape,
 * some fields optional for their own reasons, which generated types would not say, and generating needs a JSON
 * Schema → TypeScript emitter that nothing else here needs. The rule checked is the one that matters to a reader:
 * every field a client type declares is one the API sends, required only where the API always sends it, with a
 * type that accepts every value the API's schema allows; and what the CLI's `--json` offers is every field sent.
 */

type Schema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema | false;
  prefixItems?: Schema[];
  $defs?: Record<string, Schema>;
};

// Route factories only declare routes: nothing of the services is touched until a request arrives.
const doc = buildOpenApi(apiRoutes({} as never), { version: 'test', serverUrl: 'http://127.0.0.1' }) as unknown as {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>>;
};

/** Every named component ($defs) of every response, by name: the same name is the same zod schema. */
const components: Record<string, Schema> = {};
for (const ops of Object.values(doc.paths))
  for (const op of Object.values(ops))
    for (const r of Object.values(op.responses)) Object.assign(components, r.content?.['application/json']?.schema.$defs ?? {});

const response = (method: string, path: string, status: string): Schema => doc.paths[path]![method]!.responses[status]!.content!['application/json']!.schema;
const resolve = (s: Schema): Schema => (s.$ref ? resolve(components[s.$ref.replace('#/$defs/', '')]!) : s);

const files = { cli: fileURLToPath(new URL('../../src/cli/api-types.ts', import.meta.url)), mcp: fileURLToPath(new URL('../../src/mcp/library.ts', import.meta.url)) };
const program = ts.createProgram(Object.values(files), { strict: true, noEmit: true, skipLibCheck: true, target: ts.ScriptTarget.ES2022 });
const checker = program.getTypeChecker();

function clientType(file: string, name: string): ts.Type {
  const module = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
  const symbol = checker.getExportsOfModule(module).find((s) => s.name === name);
  const type = symbol && checker.getDeclaredTypeOfSymbol(symbol);
  // `any` would accept every schema: a type that is not found, or not resolved, must fail the test instead.
  if (!type || type.flags & ts.TypeFlags.Any) throw new Error(`${name} is not an exported type of ${file}`);
  return type;
}

/** A union's members, less the `undefined` an optional property's type carries (its absence is checked apart). */
const members = (t: ts.Type): ts.Type[] => (t.isUnion() ? t.types : [t]).filter((m) => !(m.flags & ts.TypeFlags.Undefined));
const flags = (t: ts.Type, f: ts.TypeFlags) => members(t).some((m) => (m.flags & f) !== 0);
const literals = (t: ts.Type): unknown[] =>
  members(t).flatMap((m): unknown[] => (m.isLiteral() ? [m.value] : m.flags & ts.TypeFlags.BooleanLiteral ? [checker.typeToString(m) === 'true'] : []));

/**
 * Where type `t` fails to accept every value schema `s` allows ([] when it accepts them all). `path` names the
 * place for the message. `elsewhere`: fields another branch of the same anyOf sends (an optional field of the
 * client's may be one of those: one type reads both shapes).
 */
function accepts(t: ts.Type, s: Schema, path: string, elsewhere: ReadonlySet<string> = new Set()): string[] {
  if (flags(t, ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return [];
  s = resolve(s);
  if (s.anyOf) {
    const fields = new Set(s.anyOf.flatMap((b) => Object.keys(resolve(b).properties ?? {})));
    return s.anyOf.flatMap((b) => accepts(t, b, path, fields));
  }
  if (Array.isArray(s.type)) return s.type.flatMap((type) => accepts(t, { ...s, type }, path, elsewhere));
  const said = `${path}: ${checker.typeToString(t)}`;
  const values = s.const !== undefined ? [s.const] : s.enum;
  if (values && !flags(t, ts.TypeFlags.String | ts.TypeFlags.Number | ts.TypeFlags.Boolean)) {
    const missing = values.filter((v) => !literals(t).includes(v));
    return missing.length ? [`${said} does not accept ${missing.map((v) => JSON.stringify(v)).join(', ')}`] : [];
  }
  switch (s.type) {
    case 'null':
      return flags(t, ts.TypeFlags.Null) ? [] : [`${said} does not accept null`];
    case 'string':
      return flags(t, ts.TypeFlags.String) ? [] : [`${said} does not accept a string`];
    case 'integer':
    case 'number':
      return flags(t, ts.TypeFlags.Number) ? [] : [`${said} does not accept a number`];
    case 'boolean':
      return flags(t, ts.TypeFlags.Boolean) || literals(t).length === 2 ? [] : [`${said} does not accept true and false`];
    case 'array': {
      const arrays = members(t).filter((m) => checker.isArrayType(m) || checker.isTupleType(m));
      if (arrays.length === 0) return [`${said} is not an array`];
      return arrays.flatMap((a) => {
        const args = checker.getTypeArguments(a as ts.TypeReference);
        if (checker.isTupleType(a)) return (s.prefixItems ?? []).flatMap((p, i) => (args[i] ? accepts(args[i], p, `${path}[${i}]`) : [`${said} has no element ${i}`]));
        return s.items ? accepts(args[0]!, s.items, `${path}[]`) : [];
      });
    }
    case 'object': {
      const objects = members(t).filter((m) => m.flags & (ts.TypeFlags.Object | ts.TypeFlags.Intersection));
      if (objects.length === 0) return [`${said} is not an object`];
      // A union of object types accepts the shape when one of its members does.
      const tries = objects.map((o) => objectAccepts(o, s, path, elsewhere));
      return tries.find((p) => p.length === 0) ?? tries.flat();
    }
    default:
      return [];
  }
}

function objectAccepts(t: ts.Type, s: Schema, path: string, elsewhere: ReadonlySet<string>): string[] {
  if (checker.getIndexInfoOfType(t, ts.IndexKind.String)) return s.properties ? [`${path} is a record where the API sends named fields`] : [];
  const problems: string[] = [];
  for (const p of checker.getPropertiesOfType(t)) {
    const where = `${path}.${p.name}`;
    const wire = s.properties?.[p.name];
    const optional = (p.flags & ts.SymbolFlags.Optional) !== 0;
    if (!wire) {
      if (!(optional && elsewhere.has(p.name))) problems.push(`${where} is read by the client but not sent by the API`);
      continue;
    }
    if (!optional && !s.required?.includes(p.name)) problems.push(`${where} is required by the client but optional in the API`);
    problems.push(...accepts(checker.getTypeOfSymbol(p), wire, where));
  }
  return problems;
}

const search = response('post', '/api/v1/search', '200');

/** Each client type, the file that declares it, and the wire shape it reads. */
const PAIRS: [keyof typeof files, string, Schema][] = [
  ['cli', 'Project', components.Project!],
  ['cli', 'ApiKey', components.ApiKey!],
  ['cli', 'ProjectMember', components.ProjectMember!],
  // The documents' routes and the upload's: only an upload says whether the file was a duplicate.
  ['cli', 'DocumentRecord', { anyOf: [components.Document!, components.UploadedDocument!] }],
  ['cli', 'SearchPassage', components.SearchPassage!],
  ['cli', 'SearchDocument', components.SearchDocument!],
  ['cli', 'SearchResult', components.SearchResult!],
  ['cli', 'DocumentResult', components.DocumentResult!],
  ['cli', 'SearchResponse', search],
  ['cli', 'Me', components.Me!],
  ['cli', 'Source', components.Source!],
  ['cli', 'TrashEntry', components.TrashEntry!],
  ['cli', 'AdminUser', components.AdminUser!],
  ['cli', 'Invitation', components.Invitation!],
  ['cli', 'IssuedLink', components.IssuedLink!],
  ['cli', 'AdminGroup', components.AdminGroup!],
  ['cli', 'OutboxMail', components.OutboxMail!],
  ['mcp', 'WireProject', components.Project!],
  ['mcp', 'WireDocument', { anyOf: [components.Document!, components.UploadedDocument!] }],
  ['mcp', 'WirePassage', components.SearchPassage!],
  ['mcp', 'WireSearchResponse', search],
  ['mcp', 'WireDocumentText', components.DocumentText!],
];

describe('the clients\' wire types agree with the OpenAPI document', () => {
  it('the components the clients read are all in the document', () => {
    for (const [, name, schema] of PAIRS) expect(schema, name).toBeDefined();
  });

  for (const [file, name, schema] of PAIRS) {
    it(`${file}: ${name}`, () => {
      expect(accepts(clientType(files[file], name), schema, name)).toEqual([]);
    });
  }

  it('the checker catches drift: a field the API does not send, a required field it may omit, a narrower type', () => {
    const Project = components.Project!;
    const renamed = { ...Project, properties: Object.fromEntries(Object.entries(Project.properties!).map(([k, v]) => [k === 'size_bytes' ? 'bytes' : k, v])) };
    expect(accepts(clientType(files.cli, 'Project'), renamed, 'Project')).toContain('Project.size_bytes is read by the client but not sent by the API');
    const optionalName = { ...Project, required: Project.required!.filter((r) => r !== 'name') };
    expect(accepts(clientType(files.cli, 'Project'), optionalName, 'Project')).toContain('Project.name is required by the client but optional in the API');
    const Document = components.Document!;
    const moreStatuses = { ...Document, properties: { ...Document.properties, status: { type: 'string', enum: ['queued', 'processing', 'ready', 'failed', 'paused'] } } };
    expect(accepts(clientType(files.mcp, 'WireDocument'), { anyOf: [moreStatuses, components.UploadedDocument!] }, 'WireDocument')).toEqual([expect.stringContaining('does not accept "paused"')]);
    const nullable = { ...Project, properties: { ...Project.properties, description: { type: ['string', 'null'] } } };
    expect(accepts(clientType(files.mcp, 'WireProject'), nullable, 'WireProject')).toEqual(['WireProject.description: string does not accept null']);
  });

  it('`--json` offers every field of each list the API sends', () => {
    const lists: Record<keyof typeof JSON_FIELDS, Schema> = {
      projects: components.Project!,
      documents: components.Document!,
      sources: components.Source!,
      keys: components.ApiKey!,
      members: components.ProjectMember!,
      results: components.SearchResult!,
      search_documents: components.DocumentResult!,
      trash: components.TrashEntry!,
      saved_searches: components.SavedSearch!,
    };
    for (const [list, schema] of Object.entries(lists)) expect([...JSON_FIELDS[list as keyof typeof JSON_FIELDS]].sort(), list).toEqual(Object.keys(resolve(schema).properties!).sort());
  });
});
