// The agents of agent-apis.py (the `openai`, `openai-agents` and `anthropic` Python packages, one venv) and the same
// agents with the `openai` npm package, for the interop tests of the proxy's agent APIs. Each returns what its
// client was answered, turn by turn.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';
import OpenAI from 'openai';
import { ensureVenv, type Venv } from '../helpers/python';

export const PY_PACKAGES = ['openai==3.57.0', 'openai-agents==0.24.0', 'anthropic==2.16.0'];
export const PY_CLIENTS = ['openai-responses', 'openai-completions', 'agents-sdk', 'anthropic', 'anthropic-stream'] as const;
export const NODE_CLIENTS = ['node-responses', 'node-completions'] as const;
export type ClientName = (typeof PY_CLIENTS)[number] | (typeof NODE_CLIENTS)[number];

export interface Answer {
  prompt_token_ids: number[];
  token_ids: number[];
  text: string;
}

export interface ClientRun {
  client: ClientName;
  answers: Answer[];
  reward: number;
  notes: Record<string, any>;
  versions?: Record<string, string>;
}

export const agentApisVenv = (): Promise<Venv> => ensureVenv('agent-apis', PY_PACKAGES);

/** One Python process (agent-apis.py) that runs agents on request, several at once. */
export class PythonAgents {
  private readonly pending = new Map<number, { resolve(r: ClientRun): void; reject(e: Error): void }>();
  private next = 0;
  private stderr = '';
  private readonly ready: Promise<void>;

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    child.stderr.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-20_000)));
    let started!: () => void;
    this.ready = new Promise<void>((resolve) => (started = resolve));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const msg = JSON.parse(line) as ClientRun & { id?: number; error?: string; ready?: boolean };
      if (msg.ready) return started();
      const waiter = msg.id === undefined ? undefined : this.pending.get(msg.id);
      if (!waiter) return;
      this.pending.delete(msg.id!);
      if (msg.error) waiter.reject(new Error(`agent-apis.py: ${msg.error}`));
      else waiter.resolve(msg);
    });
    child.on('exit', (code) => {
      for (const w of this.pending.values()) w.reject(new Error(`agent-apis.py exited (${code}): ${this.stderr}`));
      this.pending.clear();
    });
  }

  static async start(venv: Venv): Promise<PythonAgents> {
    const agents = new PythonAgents(spawn(venv.python, [path.join(__dirname, 'agent-apis.py')], { stdio: ['pipe', 'pipe', 'pipe'] }));
    const exited = once(agents.child, 'exit').then(() => {
      throw new Error(`agent-apis.py exited before it was ready: ${agents.stderr}`);
    });
    await Promise.race([agents.ready, exited]);
    return agents;
  }

  run(client: ClientName, baseUrl: string, question: string): Promise<ClientRun> {
    const id = this.next++;
    return new Promise<ClientRun>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.stdin.write(JSON.stringify({ id, client, base_url: baseUrl, question }) + '\n');
    });
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.stdin.end();
    await exited;
  }
}

const extra = (o: unknown) => o as Record<string, any>;

const ADD: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'add',
  description: 'Add two integers.',
  parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } } },
  strict: false,
};

/** Two Responses turns with the npm client: a question, then (continuing by previous_response_id, streamed) the tool's result or "Again.". */
async function nodeResponses(baseURL: string, question: string, signal?: AbortSignal): Promise<ClientRun> {
  const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 2, timeout: 120_000 });
  const first = await client.responses.create({ model: 'policy', instructions: 'Answer briefly.', input: question, tools: [ADD], max_output_tokens: 40 }, { signal });
  const outputs: OpenAI.Responses.ResponseInputItem[] = first.output.flatMap((o) => {
    if (o.type !== 'function_call') return [];
    const args = JSON.parse(o.arguments) as { a?: number; b?: number };
    return [{ type: 'function_call_output' as const, call_id: o.call_id, output: String((args.a ?? 0) + (args.b ?? 0)) }];
  });
  const input = outputs.length ? outputs : 'Again.';
  const stream = await client.responses.create({ model: 'policy', previous_response_id: first.id, input, tools: [ADD], max_output_tokens: 40, stream: true }, { signal });
  const types: string[] = [];
  let last: OpenAI.Responses.Response | null = null;
  for await (const e of stream) {
    types.push(e.type);
    if (e.type === 'response.completed' || e.type === 'response.incomplete') last = e.response;
  }
  if (!last) throw new Error(`the Responses stream ended without its response: ${types.join(', ')}`);
  // output_text is a convenience of the non-streamed answer only: read the text from the output items.
  const textOf = (r: OpenAI.Responses.Response) =>
    r.output.flatMap((o) => (o.type === 'message' ? o.content.map((p) => (p.type === 'output_text' ? p.text : '')) : [])).join('');
  const answers = [first, last].map((r) => ({ prompt_token_ids: extra(r).prompt_token_ids, token_ids: extra(r).token_ids, text: textOf(r) }));
  const notes = { events: types, continued_from: last.previous_response_id === first.id, first_output: first.output.map((o) => o.type) };
  return { client: 'node-responses', answers, reward: rewardOf(answers), notes };
}

/** Two Completions calls with the npm client: a text prompt, then the same prompt as token ids, streamed. */
async function nodeCompletions(baseURL: string, question: string, signal?: AbortSignal): Promise<ClientRun> {
  const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 2, timeout: 120_000 });
  const first = await client.completions.create({ model: 'policy', prompt: `Q: ${question}\nA:`, max_tokens: 12 }, { signal });
  const promptIds: number[] = extra(first).prompt_token_ids;
  const stream = await client.completions.create({ model: 'policy', prompt: promptIds, max_tokens: 12, stream: true }, { signal });
  let text = '';
  let last: Record<string, any> = {};
  for await (const chunk of stream) {
    text += chunk.choices[0]?.text ?? '';
    last = extra(chunk);
  }
  const answers = [
    { prompt_token_ids: promptIds, token_ids: extra(first.choices[0]).token_ids, text: first.choices[0]!.text },
    { prompt_token_ids: last.prompt_token_ids, token_ids: last.choices[0].token_ids, text },
  ];
  return { client: 'node-completions', answers, reward: rewardOf(answers), notes: { finish_reason: first.choices[0]!.finish_reason } };
}

export function runNodeAgent(client: (typeof NODE_CLIENTS)[number], baseURL: string, question: string, signal?: AbortSignal): Promise<ClientRun> {
  return client === 'node-responses' ? nodeResponses(baseURL, question, signal) : nodeCompletions(baseURL, question, signal);
}

/** As agent-apis.py scores: a reward that differs between rollouts (the plumbing is under test, not the learning). */
function rewardOf(answers: Answer[]): number {
  return (answers.reduce((n, a) => n + a.token_ids.length, 0) % 5) / 4;
}
