// Before `npm start` starts anything: the ports its services will listen on must be free. One taken is, almost
// always, another `npm start` still running; say so in one line instead of a service's stack trace.
import net from 'node:net';
import { UsageError } from '../common/service-args';

/** Resolves when 127.0.0.1:port can be listened on (port 0 always can). */
function free(port: number): Promise<boolean> {
  if (port === 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** Throws a one-line UsageError naming the first port in use, what needed it and what to do. */
export async function requireFreePorts(ports: Record<string, number>, runName: string): Promise<void> {
  for (const [service, port] of Object.entries(ports)) {
    if (await free(port)) continue;
    throw new UsageError(
      `npm start: 127.0.0.1:${port}, the ${service}'s port, is already in use: another npm start is probably running ` +
        `(stop it with Ctrl-C, or follow its run with npm run client -- watch ${runName}); ${service.toUpperCase()}_PORT=0 picks a free port`,
    );
  }
}
