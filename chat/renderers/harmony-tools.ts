// Tool declarations in Harmony's TypeScript-like syntax, as tinker-cookbook 0.6.1 writes them for gpt-oss:
//   // description
//   type get_weather = (_:
//   // City name
//   location: string,
//   unit?: "c" | "f", // default: "c"
//   }) => any;
// JSON values (enums, examples, defaults) are written as Python's json.dumps writes them.
import { pyJsonDumps } from '../../python';
import type { FunctionSpec } from '../types';

type Schema = Record<string, unknown>;

const asSchema = (v: unknown): Schema => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Schema) : {});

/** Python truthiness of a JSON value. */
function truthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (v && typeof v === 'object') return Object.keys(v).length > 0;
  return Boolean(v);
}

/** Python `str()` of a JSON scalar. */
function pyStr(v: unknown): string {
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (v === null || v === undefined) return 'None';
  return typeof v === 'string' ? v : pyJsonDumps(v);
}

function typeOf(schema: Schema): string {
  if ('oneOf' in schema) return (schema.oneOf as unknown[]).map((s) => typeOf(asSchema(s))).join(' | ');
  if ('anyOf' in schema) return (schema.anyOf as unknown[]).map((s) => typeOf(asSchema(s))).join(' | ');
  const type = 'type' in schema ? schema.type : 'any';
  if (Array.isArray(type)) return type.map((t) => typeOf({ type: t })).join(' | ');
  let base: string;
  if (type === 'string') {
    if ('enum' in schema) return (schema.enum as unknown[]).map((v) => pyJsonDumps(v)).join(' | ');
    base = 'string';
  } else if (type === 'number' || type === 'integer') base = 'number';
  else if (type === 'boolean') base = 'boolean';
  else if (type === 'array') base = `${typeOf(asSchema('items' in schema ? schema.items : {}))}[]`;
  else if (type === 'object') base = objectType(schema);
  else base = 'any';
  return truthy(schema.nullable) ? `${base} | null` : base;
}

function required(schema: Schema): Set<string> {
  return new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
}

function objectType(schema: Schema): string {
  if (schema.type !== 'object') return 'any';
  const req = required(schema);
  const fields = Object.entries(asSchema(schema.properties)).map(
    ([name, s]) => `${name}${req.has(name) ? '' : '?'}: ${typeOf(asSchema(s))}`,
  );
  return '{ ' + fields.join(', ') + ' }';
}

function comments(schema: Schema): string[] {
  const out: string[] = [];
  if (truthy(schema.title)) out.push(pyStr(schema.title), '');
  if (truthy(schema.description)) out.push(pyStr(schema.description));
  if (truthy(schema.examples)) {
    out.push('Examples:');
    for (const e of schema.examples as unknown[]) out.push(`- ${pyJsonDumps(e)}`);
  }
  return out;
}

function parametersBlock(schema: Schema): string {
  if (schema.type !== 'object' || !truthy(schema.properties)) return '()';
  const lines = [truthy(schema.description) ? `(_: // ${pyStr(schema.description)}` : '(_:', '{'];
  const req = required(schema);
  for (const [name, raw] of Object.entries(asSchema(schema.properties))) {
    const prop = asSchema(raw);
    for (const c of comments(prop)) lines.push(`// ${c}`);
    const dflt = 'default' in prop ? ` // default: ${pyJsonDumps(prop.default)}` : '';
    lines.push(`${name}${req.has(name) ? '' : '?'}: ${typeOf(prop)},${dflt}`);
  }
  lines.push('})');
  return lines.join('\n');
}

function toolDefinition(tool: FunctionSpec): string {
  const lines: string[] = [];
  if (truthy(tool.description)) lines.push(`// ${pyStr(tool.description)}`);
  lines.push(`type ${tool.name} = ${parametersBlock(asSchema(tool.parameters))} => any;`);
  return lines.join('\n');
}

/** The `# Tools` section of the developer message. */
export function harmonyToolDeclarations(tools: readonly FunctionSpec[]): string {
  return `# Tools\n\n## functions\n\nnamespace functions {\n\n${tools.map(toolDefinition).join('\n\n')}\n\n} // namespace functions`;
}
