// A real TLS endpoint in front of a Temporal dev server, as Temporal Cloud or a self-hosted cluster behind a
// load balancer presents one: Debian's nginx terminating TLS and passing gRPC on (grpc_pass). One server block
// requires a client certificate signed by the test's CA (mTLS), another requires `authorization: Bearer <key>`
// (an API key). Certificates are made by openssl in a temporary folder. nginx is installed with apt-get when
// missing (as root); when it cannot be, the error says why and the test fails rather than skipping.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../common/ports';
import { startProcess, type ManagedProcess } from '../../common/processes';

const run = promisify(execFile);

async function which(name: string): Promise<string | null> {
  for (const dir of ['/usr/sbin', '/usr/bin', '/sbin', '/usr/local/sbin', '/usr/local/bin']) {
    if (existsSync(path.join(dir, name))) return path.join(dir, name);
  }
  try {
    return (await run('sh', ['-c', `command -v ${name}`])).stdout.trim() || null;
  } catch {
    return null;
  }
}

export async function ensureNginx(log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<string> {
  if (process.env.NGINX && existsSync(process.env.NGINX)) return process.env.NGINX;
  const found = await which('nginx');
  if (found) return found;
  const how = "install Debian's nginx package (apt-get install nginx-light or nginx) or set NGINX to an nginx binary";
  if (process.getuid?.() !== 0) throw new Error(`nginx is needed to put a TLS endpoint in front of Temporal and is not installed; not root, so the test cannot install it: ${how}`);
  log('[nginx] not found: apt-get install nginx (once)');
  const opts = { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, maxBuffer: 64 << 20, timeout: 10 * 60_000 };
  try {
    await run('apt-get', ['update'], opts);
    // The package's postinst starts a system nginx on :80; policy-rc.d forbids that, the binary is all we need.
    await run('sh', ['-c', 'printf "#!/bin/sh\\nexit 101\\n" > /usr/sbin/policy-rc.d.agl && chmod +x /usr/sbin/policy-rc.d.agl'], opts);
    await run('sh', ['-c', 'test -e /usr/sbin/policy-rc.d || cp /usr/sbin/policy-rc.d.agl /usr/sbin/policy-rc.d; apt-get install -y --no-install-recommends nginx; s=$?; cmp -s /usr/sbin/policy-rc.d /usr/sbin/policy-rc.d.agl && rm -f /usr/sbin/policy-rc.d; rm -f /usr/sbin/policy-rc.d.agl; exit $s'], opts);
  } catch (err) {
    const e = err as Error & { stderr?: string };
    throw new Error(`nginx is needed for the TLS endpoint and apt-get could not install it (${(e.stderr || e.message).trim().split('\n').slice(-3).join(' | ')}): ${how}`);
  }
  const installed = await which('nginx');
  if (!installed) throw new Error(`apt-get installed nginx but no nginx binary was found: ${how}`);
  return installed;
}

export interface Certs {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A client certificate from another CA, which the endpoint must refuse. */
  strangerCert: string;
  strangerKey: string;
  /** The name the server certificate is issued for (not the address: TEMPORAL_TLS_SERVER_NAME has to say it). */
  serverName: string;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  await run('openssl', args, { cwd, timeout: 60_000 });
}

/** A CA, a server certificate for `serverName` and 127.0.0.1, a client certificate, and a stranger's pair. */
export async function makeCerts(dir: string, serverName = 'temporal.agl.test'): Promise<Certs> {
  mkdirSync(dir, { recursive: true });
  const subj = (cn: string) => ['-subj', `/CN=${cn}`];
  const key = (name: string) => openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`], dir);
  const ca = async (name: string) => {
    await key(name);
    await openssl(['req', '-x509', '-new', '-key', `${name}.key`, '-days', '2', '-out', `${name}.pem`, ...subj(`${name} test CA`)], dir);
  };
  const leaf = async (name: string, caName: string, ext: string) => {
    await key(name);
    await openssl(['req', '-new', '-key', `${name}.key`, '-out', `${name}.csr`, ...subj(name)], dir);
    writeFileSync(path.join(dir, `${name}.ext`), ext);
    await openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', `${caName}.pem`, '-CAkey', `${caName}.key`, '-CAcreateserial', '-days', '2', '-out', `${name}.pem`, '-extfile', `${name}.ext`], dir);
  };
  await ca('ca');
  await ca('stranger-ca');
  await leaf('server', 'ca', `subjectAltName=DNS:${serverName},IP:127.0.0.1\nextendedKeyUsage=serverAuth\n`);
  await leaf('client', 'ca', 'extendedKeyUsage=clientAuth\n');
  await leaf('stranger', 'stranger-ca', 'extendedKeyUsage=clientAuth\n');
  const f = (n: string) => path.join(dir, n);
  return {
    dir,
    caCert: f('ca.pem'),
    serverCert: f('server.pem'),
    serverKey: f('server.key'),
    clientCert: f('client.pem'),
    clientKey: f('client.key'),
    strangerCert: f('stranger.pem'),
    strangerKey: f('stranger.key'),
    serverName,
  };
}

export interface TlsFront {
  /** host:port of the endpoint that requires a client certificate. */
  mtlsAddress: string;
  /** host:port of the endpoint that requires `authorization: Bearer <apiKey>`. */
  apiKeyAddress: string;
  /** nginx's access log: one line per gRPC call it passed on or refused (with the status it answered). */
  accessLog: string;
  process: ManagedProcess;
  stop(): Promise<void>;
}

/** nginx in the foreground, one process, everything under `dir`; passes gRPC on to the Temporal frontend at `upstream`. */
export async function startTlsFront(nginx: string, dir: string, certs: Certs, upstream: string, apiKey: string): Promise<TlsFront> {
  const [mtlsPort, apiKeyPort] = await Promise.all([freePort(), freePort()]);
  mkdirSync(path.join(dir, 'logs'), { recursive: true });
  const accessLog = path.join(dir, 'logs', 'access.log');
  const tlsCommon = `
    ssl_certificate ${certs.serverCert};
    ssl_certificate_key ${certs.serverKey};
    ssl_protocols TLSv1.2 TLSv1.3;`;
  // A refused key is answered as a gRPC server would: HTTP 200 with grpc-status 16 (UNAUTHENTICATED) and a message.
  const conf = `
master_process off;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/logs/error.log warn;
events { worker_connections 256; }
http {
  log_format combined_grpc '$server_port $request_uri $status grpc=$sent_http_grpc_status';
  access_log ${accessLog} combined_grpc;
  client_body_temp_path ${dir}/tmp-body;
  proxy_temp_path ${dir}/tmp-proxy;
  fastcgi_temp_path ${dir}/tmp-fastcgi;
  uwsgi_temp_path ${dir}/tmp-uwsgi;
  scgi_temp_path ${dir}/tmp-scgi;
  grpc_read_timeout 300s;
  grpc_send_timeout 300s;
  client_body_timeout 300s;
  server {
    listen 127.0.0.1:${mtlsPort} ssl http2;
    ${tlsCommon}
    ssl_client_certificate ${certs.caCert};
    ssl_verify_client on;
    location / { grpc_pass grpc://${upstream}; }
  }
  server {
    listen 127.0.0.1:${apiKeyPort} ssl http2;
    ${tlsCommon}
    location / {
      if ($http_authorization != "Bearer ${apiKey}") {
        add_header grpc-status 16 always;
        add_header grpc-message "invalid API key" always;
        add_header content-type application/grpc always;
        return 200;
      }
      grpc_pass grpc://${upstream};
    }
  }
}
`;
  const confFile = path.join(dir, 'nginx.conf');
  writeFileSync(confFile, conf);
  await run(nginx, ['-t', '-p', dir, '-c', confFile], { timeout: 30_000 }).catch((err: Error & { stderr?: string }) => {
    throw new Error(`nginx refused the test's configuration: ${(err.stderr || err.message).trim()}`);
  });
  const proc = await startProcess({ name: 'nginx', command: nginx, args: ['-p', dir, '-c', confFile] });
  // nginx prints nothing when ready: wait until both ports accept connections.
  const deadline = Date.now() + 30_000;
  for (const port of [mtlsPort, apiKeyPort]) {
    while (!(await accepts(port))) {
      if (proc.child.exitCode !== null) throw new Error(`nginx exited: ${proc.output()}`);
      if (Date.now() > deadline) throw new Error(`nginx did not listen on ${port} within 30 s: ${proc.output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    mtlsAddress: `127.0.0.1:${mtlsPort}`,
    apiKeyAddress: `127.0.0.1:${apiKeyPort}`,
    accessLog,
    process: proc,
    stop: () => proc.stop(5_000),
  };
}

async function accepts(port: number): Promise<boolean> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}
