// The search attributes a training run writes (workflows/search-attributes.ts) on the namespace it runs in: which
// are missing, registering them (`client setup`), and the exact commands that add them where a client may not
// (Temporal Cloud registers them in its console). A run on a namespace without them fails every
// workflow task with BadSearchAttributes, so the worker and `client status` name them instead of stalling.
import { temporal } from '@temporalio/proto';
import { ALL_SEARCH_ATTRIBUTES } from '../shared/search-attributes';

type IndexedValueType = temporal.api.enums.v1.IndexedValueType;
const IVT = temporal.api.enums.v1.IndexedValueType;

/** The operator service calls used here (the client's and the worker's connections both have them). */
export interface OperatorCalls {
  listSearchAttributes(req: { namespace: string }): Promise<{ customAttributes?: Record<string, IndexedValueType> | null }>;
  addSearchAttributes(req: { namespace: string; searchAttributes: Record<string, IndexedValueType> }): Promise<unknown>;
}

export interface RequiredAttribute {
  name: string;
  /** As the Temporal CLI and Cloud console name the type: Keyword, Int, Double... */
  type: string;
  indexed: IndexedValueType;
}

const TYPES: Record<string, [string, IndexedValueType]> = {
  KEYWORD: ['Keyword', IVT.INDEXED_VALUE_TYPE_KEYWORD],
  TEXT: ['Text', IVT.INDEXED_VALUE_TYPE_TEXT],
  INT: ['Int', IVT.INDEXED_VALUE_TYPE_INT],
  DOUBLE: ['Double', IVT.INDEXED_VALUE_TYPE_DOUBLE],
  BOOL: ['Bool', IVT.INDEXED_VALUE_TYPE_BOOL],
  DATETIME: ['Datetime', IVT.INDEXED_VALUE_TYPE_DATETIME],
  KEYWORD_LIST: ['KeywordList', IVT.INDEXED_VALUE_TYPE_KEYWORD_LIST],
};

export const REQUIRED_ATTRIBUTES: RequiredAttribute[] = ALL_SEARCH_ATTRIBUTES.map((k) => {
  const [type, indexed] = TYPES[k.type]!;
  return { name: k.name, type, indexed };
});

export interface AttributeCheck {
  missing: RequiredAttribute[];
  /** Registered under our name with another type: a run cannot write them either. */
  wrongType: { attribute: RequiredAttribute; registeredAs: string }[];
}

const typeName = (t: IndexedValueType) => Object.values(TYPES).find(([, v]) => v === t)?.[0] ?? `type ${t}`;

export async function checkSearchAttributes(op: OperatorCalls, namespace: string): Promise<AttributeCheck> {
  const { customAttributes } = await op.listSearchAttributes({ namespace });
  const have = customAttributes ?? {};
  const out: AttributeCheck = { missing: [], wrongType: [] };
  for (const a of REQUIRED_ATTRIBUTES) {
    const t = have[a.name];
    if (t === undefined || t === null) out.missing.push(a);
    else if (Number(t) !== Number(a.indexed)) out.wrongType.push({ attribute: a, registeredAs: typeName(t) });
  }
  return out;
}

/** `temporal operator search-attribute create` for the attributes, as one command (the CLI takes several pairs). */
export function cliCommand(namespace: string, attrs: RequiredAttribute[], address?: string): string {
  const pairs = attrs.map((a) => `--name ${a.name} --type ${a.type}`).join(' ');
  return `temporal operator search-attribute create${address ? ` --address ${address}` : ''} --namespace ${namespace} ${pairs}`;
}

/** One line naming what is missing and how to add it, or null when the namespace has every attribute. */
export function describeProblem(check: AttributeCheck, namespace: string, address?: string): string | null {
  const parts: string[] = [];
  if (check.missing.length) {
    parts.push(
      `namespace ${namespace} lacks the search attributes training runs write: ${check.missing.map((a) => `${a.name} (${a.type})`).join(', ')}; ` +
        `add them with \`npm run client -- setup\`, or \`${cliCommand(namespace, check.missing, address)}\`; ` +
        `on Temporal Cloud under the namespace's Custom Search Attributes in the Cloud console`,
    );
  }
  for (const w of check.wrongType) {
    parts.push(`search attribute ${w.attribute.name} is registered on namespace ${namespace} as ${w.registeredAs}, but runs write it as ${w.attribute.type}`);
  }
  return parts.length ? parts.join('; ') : null;
}

export interface SetupResult {
  added: RequiredAttribute[];
  alreadyThere: RequiredAttribute[];
}

/** Registers the missing attributes (idempotent); throws when a name is taken by another type. */
export async function registerSearchAttributes(op: OperatorCalls, namespace: string): Promise<SetupResult> {
  const check = await checkSearchAttributes(op, namespace);
  if (check.wrongType.length) throw new Error(describeProblem({ missing: [], wrongType: check.wrongType }, namespace)!);
  if (check.missing.length) {
    await op.addSearchAttributes({ namespace, searchAttributes: Object.fromEntries(check.missing.map((a) => [a.name, a.indexed])) });
  }
  const missingNames = new Set(check.missing.map((a) => a.name));
  return { added: check.missing, alreadyThere: REQUIRED_ATTRIBUTES.filter((a) => !missingNames.has(a.name)) };
}
