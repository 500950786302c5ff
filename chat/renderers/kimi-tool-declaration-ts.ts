// Kimi K2.5 / K2.6 declare tools as TypeScript-like types (Moonshot's tool_declaration_ts, which the cookbook
// carries as renderers/kimi_k2_5_tool_declaration_ts.py), e.g.
//
//   # Tools
//
//   ## functions
//   namespace functions {
//   // Get the weather
//   type get_weather = (_: {
//     // City name
//     city: string,
//     unit?: "c" | "f"
//   }) => any;
//   }
//
// Rules, as the Python code has them: required properties first, then optional, each group sorted by name;
// descriptions and a few constraints become `//` comments; `$defs` become interfaces and `$ref` their names;
// `"$ref": "#"` makes the parameters an interface of their own. Values print as Python prints them (True, 1.0).
import { isPyDict, pyGet, pyItems, pyJsonDumps, pyStr, PyFloat, type PyValue } from '../../python';

const INDENT = '  ';
const FIELD_SEP = ',\n';

type Dict = Map<string, PyValue> | { [k: string]: PyValue };

export class ToolDeclarationError extends Error {
  override readonly name = 'ToolDeclarationError';
}

function truthy(v: PyValue | undefined): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === '') return false;
  if (typeof v === 'bigint') return v !== 0n;
  if (v instanceof PyFloat) return v.value !== 0;
  if (Array.isArray(v)) return v.length > 0;
  if (isPyDict(v)) return pyItems(v).length > 0;
  return true;
}

const byCodePoint = (a: string, b: string): number => {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
};

function comment(description: string, indent = ''): string {
  return description
    .split('\n')
    .map((line) => (line ? `${indent}// ${line}` : ''))
    .join('\n');
}

class Defs {
  readonly definitions = new Map<string, PyValue>();
  hasSelfRef = false;

  register(defs: PyValue | undefined): void {
    if (!truthy(defs) || !isPyDict(defs!)) return;
    for (const [k, v] of pyItems(defs as Dict)) this.definitions.set(k, v);
  }

  resolve(ref: string): PyValue | 'self' {
    if (ref === '#') {
      this.hasSelfRef = true;
      return 'self';
    }
    if (ref.startsWith('#/$defs/')) {
      const name = ref.split('/').pop()!;
      if (!this.definitions.has(name)) throw new ToolDeclarationError(`Reference not found: ${ref}`);
      return this.definitions.get(name)!;
    }
    throw new ToolDeclarationError(`Unsupported reference format: ${ref}`);
  }
}

abstract class TsType {
  description = '';
  constraints: [string, PyValue][] = [];

  protected init(props: PyValue | undefined, allowed: readonly string[] = []): void {
    const d = props !== undefined && isPyDict(props) ? (props as Dict) : undefined;
    const desc = d ? pyGet(d, 'description') : undefined;
    this.description = typeof desc === 'string' ? desc : desc === undefined || desc === null ? '' : pyStr(desc);
    this.constraints = d ? pyItems(d).filter(([k]) => allowed.includes(k)) : [];
  }

  abstract ts(indent: string): string;

  docstring(indent: string): string {
    const lines: string[] = [];
    if (this.description) lines.push(comment(this.description, indent));
    if (this.constraints.length) {
      const sorted = [...this.constraints].sort(([a], [b]) => byCodePoint(a, b));
      lines.push(`${indent}// ${sorted.map(([k, v]) => `${k}: ${pyStr(v)}`).join(', ')}`);
    }
    return lines.map((l) => l + '\n').join('');
  }
}

class Scalar extends TsType {
  constructor(readonly type: string, props?: PyValue) {
    super();
    const allowed = type === 'string' ? ['maxLength', 'minLength', 'pattern'] : type === 'number' || type === 'integer' ? ['maximum', 'minimum'] : [];
    this.init(props ?? new Map(), allowed);
  }
  ts(): string {
    return this.type === 'integer' ? 'number' : this.type;
  }
}

interface Param {
  name: string;
  type: TsType;
  optional: boolean;
  default: PyValue | undefined;
}

function paramTs(p: Param, indent: string): string {
  let out = p.type.docstring(indent);
  if (p.default !== undefined && p.default !== null) {
    const d = p.default;
    const numeric = typeof d === 'number' || typeof d === 'bigint' || typeof d === 'boolean' || d instanceof PyFloat;
    out += `${indent}// Default: ${numeric ? pyStr(d) : pyJsonDumps(d, { ensureAscii: false })}\n`;
  }
  return out + `${indent}${p.name}${p.optional ? '?' : ''}: ${p.type.ts(indent)}`;
}

class ObjectT extends TsType {
  properties: Param[] = [];
  additional: TsType | boolean | null | undefined = undefined;

  constructor(schema: PyValue, defs: Defs) {
    super();
    this.init(schema);
    if (!truthy(schema) || !isPyDict(schema)) return;
    const d = schema as Dict;
    if (pyGet(d, '$defs') !== undefined) defs.register(pyGet(d, '$defs'));
    const ap = pyGet(d, 'additionalProperties');
    this.additional = ap !== undefined && isPyDict(ap) ? parseType(ap, defs) : (ap as boolean | null | undefined);
    const props = pyGet(d, 'properties');
    if (props === undefined) return;
    const required = pyGet(d, 'required');
    const req = new Set(Array.isArray(required) ? required.map((x) => String(x)) : []);
    this.properties = pyItems(props as Dict).map(([name, prop]) => ({
      name,
      type: parseType(prop, defs),
      optional: !req.has(name),
      default: isPyDict(prop) ? pyGet(prop, 'default') : undefined,
    }));
  }

  ts(indent = ''): string {
    const sorted = (ps: Param[]) => [...ps].sort((a, b) => byCodePoint(a.name, b.name));
    const params = [...sorted(this.properties.filter((p) => !p.optional)), ...sorted(this.properties.filter((p) => p.optional))];
    const fields = params.map((p) => paramTs(p, indent + INDENT));
    if (this.additional !== undefined && this.additional !== null) {
      let apType: string;
      if (this.additional === true) apType = 'any';
      else if (this.additional === false) apType = 'never';
      else if (this.additional instanceof TsType) apType = this.additional.ts(indent + INDENT);
      else throw new ToolDeclarationError(`Unknown additionalProperties: ${pyStr(this.additional as PyValue)}`);
      fields.push(`${indent + INDENT}[k: string]: ${apType}`);
    }
    if (!fields.length) return '{}';
    return `{\n${fields.join(FIELD_SEP)}\n${indent}}`;
  }
}

class ArrayT extends TsType {
  item: TsType;
  constructor(schema: Dict, defs: Defs) {
    super();
    this.init(schema, ['minItems', 'maxItems']);
    const items = pyGet(schema, 'items');
    this.item = truthy(items) ? parseType(items!, defs) : new Scalar('any');
  }
  ts(indent = ''): string {
    const doc = this.item.docstring(indent + INDENT);
    if (doc) return 'Array<\n' + doc + indent + INDENT + this.item.ts(indent + INDENT) + '\n' + indent + '>';
    return `Array<${this.item.ts(indent)}>`;
  }
}

class EnumT extends TsType {
  values: PyValue[];
  constructor(schema: Dict) {
    super();
    this.init(schema);
    const values = pyGet(schema, 'enum');
    this.values = Array.isArray(values) ? values : [];
    let typ = pyGet(schema, 'type');
    if (typ === undefined) return;
    if (Array.isArray(typ)) {
      if (typ.length === 1) typ = typ[0];
      else if (typ.length === 2 && typ.includes('null')) typ = typ[0] !== 'null' ? typ[0] : typ[1];
      else throw new ToolDeclarationError(`Enum type ${pyStr(typ)} is not supported`);
    }
    for (const v of this.values) {
      if (v === null) continue;
      const isNum = typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean' || v instanceof PyFloat;
      const isInt = typeof v === 'bigint' || typeof v === 'boolean' || (typeof v === 'number' && Number.isInteger(v));
      if (typ === 'string' && typeof v !== 'string') throw new ToolDeclarationError(`Enum value ${pyStr(v)} is not a string`);
      if (typ === 'number' && !isNum) throw new ToolDeclarationError(`Enum value ${pyStr(v)} is not a number`);
      if (typ === 'integer' && !isInt) throw new ToolDeclarationError(`Enum value ${pyStr(v)} is not an integer`);
      if (typ === 'boolean' && typeof v !== 'boolean') throw new ToolDeclarationError(`Enum value ${pyStr(v)} is not a boolean`);
    }
  }
  ts(): string {
    return this.values.map((v) => (typeof v === 'string' ? `"${v}"` : pyStr(v))).join(' | ');
  }
}

class AnyOfT extends TsType {
  types: TsType[];
  constructor(schema: Dict, defs: Defs) {
    super();
    this.init(schema);
    const list = pyGet(schema, 'anyOf');
    this.types = (Array.isArray(list) ? list : []).map((t) => parseType(t, defs));
  }
  ts(indent = ''): string {
    return this.types.map((t) => t.ts(indent)).join(' | ');
  }
}

const UNION_NAMES: Record<string, string> = {
  string: 'string',
  number: 'number',
  integer: 'number',
  boolean: 'boolean',
  null: 'null',
  object: '{}',
  array: 'Array<any>',
};

class UnionT extends TsType {
  types: string[];
  constructor(schema: Dict) {
    super();
    this.init(schema);
    this.types = (pyGet(schema, 'type') as PyValue[]).map((t) => {
      const n = typeof t === 'string' ? UNION_NAMES[t] : undefined;
      if (n === undefined) throw new ToolDeclarationError(`unknown JSON schema type ${pyStr(t)} in a type list`);
      return n;
    });
  }
  ts(): string {
    return this.types.join(' | ');
  }
}

class RefT extends TsType {
  name: string;
  constructor(schema: Dict, defs: Defs) {
    super();
    this.init(schema);
    const ref = String(pyGet(schema, '$ref'));
    this.name = defs.resolve(ref) === 'self' ? 'parameters' : ref.split('/').pop()!;
  }
  ts(): string {
    return this.name;
  }
}

function parseType(schema: PyValue, defs: Defs): TsType {
  if (typeof schema === 'boolean') return new Scalar(schema ? 'any' : 'null');
  if (!isPyDict(schema)) throw new ToolDeclarationError(`Invalid JSON Schema object: ${pyStr(schema)}`);
  const d = schema as Dict;
  if (pyGet(d, '$ref') !== undefined) return new RefT(d, defs);
  if (pyGet(d, 'anyOf') !== undefined) return new AnyOfT(d, defs);
  if (pyGet(d, 'enum') !== undefined) return new EnumT(d);
  const typ = pyGet(d, 'type');
  if (typ !== undefined) {
    if (Array.isArray(typ)) return new UnionT(d);
    if (typ === 'object') return new ObjectT(d, defs);
    if (typ === 'array') return new ArrayT(d, defs);
    return new Scalar(pyStr(typ), d);
  }
  if (pyItems(d).length === 0) return new Scalar('any');
  throw new ToolDeclarationError(`Invalid JSON Schema object: ${pyStr(d)}`);
}

function functionTs(fn: Dict): string {
  const defs = new Defs();
  const params = pyGet(fn, 'parameters');
  const parsed = new ObjectT(truthy(params) ? params! : new Map(), defs);
  const interfaces: string[] = [];
  let root: string | null = null;
  if (defs.hasSelfRef) {
    root = 'parameters';
    const fields = parsed.properties.map((p) => paramTs(p, INDENT)).join(FIELD_SEP);
    interfaces.push(`interface ${root} {${fields ? `\n${fields}\n` : ''}}`);
  }
  for (const [name, schema] of [...defs.definitions.entries()]) {
    const body = parseType(schema, defs).ts('');
    const desc = isPyDict(schema) ? pyGet(schema, 'description') : undefined;
    const descPart = truthy(desc) ? comment(String(desc)) + '\n' : '';
    interfaces.push(`${descPart}interface ${name} ${body}`);
  }
  const rawName = pyGet(fn, 'name');
  const name = rawName === undefined ? 'function' : pyStr(rawName);
  const typeDef = root ? `type ${name} = (_: ${root}) => any;` : `type ${name} = (_: ${parsed.ts('')}) => any;`;
  const description = pyGet(fn, 'description');
  const descText = truthy(description) ? comment(String(description)) : '';
  return [interfaces.join('\n'), descText, typeDef].filter((s) => s).join('\n');
}

/** OpenAI-style tools ({"type": "function", "function": {...}}) as Kimi K2.5's TypeScript declaration; '' for none. */
export function encodeToolsToTypescript(tools: readonly PyValue[]): string {
  if (!tools.length) return '';
  const functions: string[] = [];
  for (const tool of tools) {
    if (!isPyDict(tool) || pyGet(tool, 'type') !== 'function') continue;
    const fn = pyGet(tool, 'function');
    if (truthy(fn) && isPyDict(fn!)) functions.push(functionTs(fn as Dict));
  }
  if (!functions.length) return '';
  return '# Tools\n\n## functions\nnamespace functions {\n' + functions.join('\n') + '\n}\n';
}
