// The span tree of one rollout (adapter/triplet.py: TraceTree.from_spans, repair_hierarchy,
// agent_name). Spans from the agent's tracer, the LLM proxy and the runner's reward spans all
// land in one tree, so LLM calls and rewards can be related by position and time.
import type { StoreSpan } from './types';

/** The span fields the adapters read; virtual nodes have no store identity. */
export interface TreeSpan {
  name: string;
  attributes: Record<string, unknown>;
  start_time: number | null;
  end_time: number | null;
}

export interface TraceNode {
  id: string;
  span: TreeSpan;
  children: TraceNode[];
  /** True for parents that were referenced but not recorded, and for the synthetic root. */
  virtual: boolean;
}

function minOf(xs: (number | null)[]): number | null {
  const v = xs.filter((x): x is number => x !== null);
  return v.length > 0 ? Math.min(...v) : null;
}

function maxOf(xs: (number | null)[]): number | null {
  const v = xs.filter((x): x is number => x !== null);
  return v.length > 0 ? Math.max(...v) : null;
}

/**
 * Roots are spans without a parent plus every parent id that was never recorded (e.g. an AgentOps
 * session span that was not exported), which becomes a virtual span spanning its children. More
 * than one root -> a synthetic "virtual-root" over them all.
 *
 * Differences from Python, only for inputs it mishandles: missing parents are ordered by first
 * reference (Python iterates a set, so its order varies between runs), and a parent cycle is cut
 * instead of recursing forever.
 */
export function buildTraceTree(spans: readonly StoreSpan[]): TraceNode {
  if (spans.length === 0) throw new Error('No spans provided to create a trace tree.');
  const byId = new Map<string, StoreSpan>();
  for (const s of spans) byId.set(s.span_id, s);

  const childIds = new Map<string, string[]>();
  const rootIds: string[] = [];
  const missingParents: string[] = [];
  for (const s of spans) {
    if (s.parent_id === null || s.parent_id === undefined) {
      rootIds.push(s.span_id);
      continue;
    }
    if (!childIds.has(s.parent_id)) childIds.set(s.parent_id, []);
    childIds.get(s.parent_id)!.push(s.span_id);
  }
  for (const parentId of childIds.keys()) if (!byId.has(parentId)) missingParents.push(parentId);
  rootIds.push(...missingParents);

  const visiting = new Set<string>();
  const visit = (id: string): TraceNode => {
    visiting.add(id);
    const children = (childIds.get(id) ?? []).filter((c) => !visiting.has(c)).map(visit);
    visiting.delete(id);
    const span = byId.get(id);
    if (span) return { id, span, children, virtual: false };
    return {
      id,
      span: {
        name: 'agentlightning.virtual',
        attributes: {},
        start_time: minOf(children.map((c) => c.span.start_time)),
        end_time: maxOf(children.map((c) => c.span.end_time)),
      },
      children,
      virtual: true,
    };
  };

  if (rootIds.length === 0) throw new Error('No root spans found in the trace.');
  if (rootIds.length === 1) return visit(rootIds[0]!);
  const roots = rootIds.map(visit);
  return {
    id: 'virtual-root',
    span: {
      name: 'virtual-root',
      attributes: {},
      start_time: roots[0]!.span.start_time,
      end_time: roots[roots.length - 1]!.span.end_time,
    },
    children: roots,
    virtual: true,
  };
}

/** Depth-first, parent before children. */
export function traverse(node: TraceNode): TraceNode[] {
  const out: TraceNode[] = [];
  const walk = (n: TraceNode) => {
    out.push(n);
    n.children.forEach(walk);
  };
  walk(node);
  return out;
}

/**
 * Move spans that float directly under the root (mixed tracers lose parents) under the tightest
 * span that contains them in time. Walks down single-child chains first (AgentOps wraps
 * everything in one session span). Mutates the tree, as Python's method does.
 */
export function repairHierarchy(node: TraceNode): void {
  if (node.children.length === 1) {
    repairHierarchy(node.children[0]!);
    return;
  }
  for (const repair of [...node.children]) {
    if (node.children.length === 1) break;
    const { start_time: rs, end_time: re } = repair.span;
    if (rs === null || re === null) continue;
    // A span cannot move under its own descendant (Python would silently detach the subtree).
    const own = new Set(traverse(repair));
    let closest: TraceNode | null = null;
    let closestSlack = Infinity;
    for (const candidate of traverse(node)) {
      if (candidate === node || own.has(candidate)) continue;
      const { start_time: cs, end_time: ce } = candidate.span;
      if (cs === null || ce === null) continue;
      if (cs <= rs && ce >= re) {
        const slack = ce - re + rs - cs;
        if (slack > 0 && slack < closestSlack) {
          closestSlack = slack;
          closest = candidate;
        }
      }
    }
    if (closest !== null) {
      node.children.splice(node.children.indexOf(repair), 1);
      closest.children.push(repair);
    }
  }
}

const str = (v: unknown): string | null => (v === undefined || v === null ? null : String(v));

/** The agent a span stands for, from the attribute conventions of the frameworks AGL knows. */
export function agentName(span: TreeSpan): string | null {
  const a = span.attributes ?? {};
  if (a['agent.name'] !== undefined && a['agent.name'] !== null) return str(a['agent.name']); // OpenAI Agents SDK
  if (a['agentops.span.kind'] === 'agent' && a['operation.name'] != null) return str(a['operation.name']); // AgentOps @agent
  if (a['recipient_agent_type'] != null) return str(a['recipient_agent_type']); // AutoGen
  if (a['langchain.chain.type'] != null) return str(a['langchain.chain.type']); // LangGraph
  if (a['executor.id'] != null) return str(a['executor.id']); // agent-framework
  if (a['type'] === 'agent' && a['agentlightning.operation.input.name'] != null) return str(a['agentlightning.operation.input.name']); // Weave
  if (span.name.startsWith('langchain.Chain.') && a['lc_name'] != null) return str(a['lc_name']); // Weave + LangChain
  return null;
}
