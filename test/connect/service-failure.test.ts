// Naming the service behind a network failure (common/service-failure.ts), from errors as node and the clients
// raise them: a refused connection, a host name that does not resolve, a request deadline, a cause chain.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { describeNetworkFailure } from '../../common/service-failure';
import { freePort } from '../../common/ports';
import { RequestTimeoutError } from '../../common/http-transport';

const services = { store: 'http://127.0.0.1:4747', trainer: 'https://tinker.example.com/services/x', proxy: 'http://proxy-a:12306/' };

function refused(port: number): Promise<Error> {
  return new Promise((resolve) => net.connect({ host: '127.0.0.1', port }).once('error', resolve));
}

test('a refused connection is named by the service at that address, with its URL', async () => {
  const port = await freePort();
  const err = await refused(port);
  assert.equal(describeNetworkFailure(err, { ...services, store: `http://localhost:${port}` }), `store http://localhost:${port} unreachable (connection refused): connect ECONNREFUSED 127.0.0.1:${port}`);
  // Wrapped as fetch wraps it (TypeError: fetch failed, the cause inside).
  const wrapped = Object.assign(new TypeError('fetch failed'), { cause: err });
  assert.match(describeNetworkFailure(wrapped, { store: `http://127.0.0.1:${port}` })!, new RegExp(`^store http://127\\.0\\.0\\.1:${port} unreachable \\(connection refused\\)`));
  // An address no service has is named as it is.
  assert.match(describeNetworkFailure(err, services)!, new RegExp(`^127\\.0\\.0\\.1:${port} unreachable \\(connection refused\\)`));
});

test('an unknown host and a deadline are named; other errors are not network failures', () => {
  const dns = Object.assign(new Error('getaddrinfo ENOTFOUND proxy-a'), { code: 'ENOTFOUND', hostname: 'proxy-a' });
  assert.equal(describeNetworkFailure(dns, services), 'proxy http://proxy-a:12306 unreachable (host name not found): getaddrinfo ENOTFOUND proxy-a');
  const timeout = new RequestTimeoutError('https://tinker.example.com/services/x/api/v1/create_model', 30_000);
  assert.match(describeNetworkFailure(timeout, services)!, /^trainer https:\/\/tinker\.example\.com\/services\/x unreachable \(no answer before the deadline\)/);
  assert.equal(describeNetworkFailure(new Error('400 bad request'), services), null);
  assert.equal(describeNetworkFailure(undefined, services), null);
});
