// `npm run trainer`: the local Tinker-compatible trainer on 127.0.0.1:8110 (flags --host --port --data,
// env TRAINER_HOST/_PORT/_DATA; AGL_TRAINER_TOKEN to require a token; bound beyond loopback it is required unless
// --trusted-network or AGL_TRUSTED_NETWORK=1). Base models are built on first
// use and cached under <data>/base-models; checkpoints live under <data>/runs. `--engine bigram` swaps in
// the bigram stand-in (trainer/server/bigram-engine.ts) for fast protocol-only tests. Test modes of hosted
// Tinker's handshake: AGL_TRAINER_JWT_LIFETIME_SECONDS=N turns on JWT mode (client/config says
// pjwt_auth_enabled; POST /auth/token hands out JWTs living N s, required on every other request), and
// AGL_TRAINER_CLIENT_FLAGS='{"proto_compress_fwdbwd":true,...}' adds flags to the client/config answer.
import { requireTokenOrTrusted } from '../common/access';
import { announceListening, exitOnSignal, parseServiceArgs, runMain, UsageError } from '../common/service-args';
import type { Engine } from './engine';
import { createBigramEngine } from './server/bigram-engine';
import { startTrainerServer } from './server/server';
import { createEngine } from './model';

function engineFor(kind: string, dataDir: string): Engine {
  if (kind === 'local') return createEngine({ dataDir, log: (line) => process.stderr.write(`[trainer] ${line}\n`) });
  if (kind === 'bigram') return createBigramEngine();
  throw new UsageError(`trainer: --engine must be local or bigram, got ${JSON.stringify(kind)}`);
}

function envSettings(env: NodeJS.ProcessEnv): { jwtLifetimeSeconds?: number; clientFlags?: Record<string, unknown> } {
  const out: { jwtLifetimeSeconds?: number; clientFlags?: Record<string, unknown> } = {};
  const life = env.AGL_TRAINER_JWT_LIFETIME_SECONDS;
  if (life) {
    out.jwtLifetimeSeconds = Number(life);
    if (!Number.isInteger(out.jwtLifetimeSeconds) || out.jwtLifetimeSeconds < 1) throw new UsageError(`trainer: AGL_TRAINER_JWT_LIFETIME_SECONDS must be a positive whole number, got ${JSON.stringify(life)}`);
  }
  const flags = env.AGL_TRAINER_CLIENT_FLAGS;
  if (flags) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(flags);
    } catch (err) {
      throw new UsageError(`trainer: AGL_TRAINER_CLIENT_FLAGS is not JSON: ${(err as Error).message}`);
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UsageError('trainer: AGL_TRAINER_CLIENT_FLAGS must be a JSON object');
    out.clientFlags = parsed as Record<string, unknown>;
  }
  return out;
}

runMain(async () => {
  const args = parseServiceArgs(process.argv.slice(2), {
    name: 'trainer',
    envPrefix: 'TRAINER',
    defaultPort: 8110,
    defaultDataDir: '.data/trainer',
    extra: { engine: 'AGL_TRAINER_ENGINE' },
  });
  // Before anything is opened: an open service on the network is refused unless the network is trusted.
  requireTokenOrTrusted('trainer', args.host, process.env.AGL_TRAINER_TOKEN || undefined, 'AGL_TRAINER_TOKEN', args.trustedNetwork);
  const engine = engineFor(args.values.engine ?? 'local', args.dataDir);
  const server = await startTrainerServer({
    engine,
    dataDir: args.dataDir,
    host: args.host,
    port: args.port,
    token: process.env.AGL_TRAINER_TOKEN || undefined,
    ...envSettings(process.env),
    log: (line) => process.stderr.write(`[trainer] ${line}\n`),
  });
  exitOnSignal(() => server.close(), { name: 'trainer' });
  announceListening('trainer', args.host, server.port);
});
