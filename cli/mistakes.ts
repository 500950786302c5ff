// The client's answers to mistakes: one line that names what went wrong and what to do, and an exit code, never
// a stack trace (the run unknown, the server not there, the run already over, a refused update).
import net from 'node:net';
import { ServiceError, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ActivityFailure, WorkflowNotFoundError } from '@temporalio/common';

/** A mistake the client explains in one line; exits 1. */
export class CommandError extends Error {
  override readonly name = 'CommandError';
}

/** "host:port" accepts a TCP connection within `timeoutMs` (a refused one fails at once, not after gRPC's deadline). */
function tcpOpen(address: string, timeoutMs: number): Promise<string | null> {
  const i = address.lastIndexOf(':');
  const host = address.slice(0, i).replace(/^\[|\]$/g, '') || '127.0.0.1';
  const port = Number(address.slice(i + 1));
  if (i < 0 || !Number.isInteger(port)) return Promise.resolve(`not a host:port address`);
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (problem: string | null) => {
      socket.destroy();
      resolve(problem);
    };
    socket.setTimeout(timeoutMs, () => done('no answer'));
    socket.once('connect', () => done(null));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code === 'ECONNREFUSED' ? 'connection refused' : (err.code ?? err.message)));
  });
}

const NO_SERVER_HINT = 'is npm start running? Otherwise give the server with --address or TEMPORAL_ADDRESS';

/** Throws a CommandError unless a Temporal server may be listening at `address`. */
export async function requireServer(address: string): Promise<void> {
  const problem = await tcpOpen(address, 5_000);
  if (problem) throw new CommandError(`cannot reach Temporal at ${address} (${problem}): ${NO_SERVER_HINT}`);
}

/**
 * Why a run failed, in one line: the messages of the failure and its causes, outermost first, each flattened
 * (a config error's list of problems joined), an activity's failure named by the activity.
 */
export function failureMessage(err: unknown): string {
  const messages: string[] = [];
  for (let e: unknown = err instanceof WorkflowFailedError ? err.cause : err; e instanceof Error; e = (e as Error).cause) {
    const m = e instanceof ActivityFailure ? `activity ${e.activityType ?? ''} failed` : e.message.replace(/\s*\n\s*(- )?/g, ' ').trim();
    if (m && !messages.includes(m)) messages.push(m);
  }
  return messages.join(': ') || String(err);
}

/** How a run that is no longer running ended: its state, and for a failure (or termination) the reason. */
export async function endedHow(handle: WorkflowHandle, state: string): Promise<string> {
  if (state === 'COMPLETED' || state === 'CONTINUED_AS_NEW') return state;
  try {
    await handle.result();
    return state;
  } catch (err) {
    return `${state}: ${failureMessage(err)}`;
  }
}

/** One line for any error a client command ends with. */
export function explain(err: unknown, ctx: { address: string; workflowId?: string }): string {
  if (err instanceof CommandError) return err.message;
  if (err instanceof WorkflowNotFoundError) {
    return `no run ${ctx.workflowId ?? err.workflowId ?? ''} on the Temporal server at ${ctx.address} (npm run client -- list shows the runs)`;
  }
  const message = err instanceof Error ? err.message : String(err);
  if (/Failed to connect before the deadline|ECONNREFUSED|UNAVAILABLE/i.test(message) || (err instanceof ServiceError && /unavailable/i.test(message))) {
    return `cannot reach Temporal at ${ctx.address}: ${NO_SERVER_HINT}`;
  }
  return message.split('\n')[0]!;
}
