// Connecting to Temporal the one way the client, the worker and npm start share: open the connection, then one
// call (GetSystemInfo) proves the TLS handshake and the credentials, so a wrong one is named at the start in one
// line (connectionProblem), not mid-command. The worker passes its own opener: NativeConnection comes from
// @temporalio/worker, which the client does not load.
import { Client, Connection } from '@temporalio/client';
import type { TemporalSettings } from '../common/temporal-settings';
import { connectionProblem } from './connection-problem';

/** A connection that failed or was refused; the message is connectionProblem's one line. */
export class TemporalConnectError extends Error {}

interface Probeable {
  workflowService: { getSystemInfo(request: object): Promise<unknown> };
}

/** The connection `open` makes, once the server has answered one call on it. */
export async function openProbed<C extends Probeable>(s: TemporalSettings, open: () => Promise<C>): Promise<C> {
  try {
    const connection = await open();
    await connection.workflowService.getSystemInfo({});
    return connection;
  } catch (err) {
    throw new TemporalConnectError(connectionProblem(err, s));
  }
}

/** A client on the settings' namespace over a probed connection (10 s to connect). */
export async function connectClient(s: TemporalSettings): Promise<Client> {
  const connection = await openProbed(s, () => Connection.connect({ ...s.connection, connectTimeout: '10 seconds' }));
  return new Client({ connection, namespace: s.namespace });
}
