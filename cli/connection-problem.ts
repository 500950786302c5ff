// One line for a failed connection to Temporal, naming the setting to check: the TLS certificates and key, the
// API key, or the address. The SDK's errors are long and nested (gRPC status, then TLS details); this says which
// of the standard settings (TEMPORAL_*, or the profile's keys in its TOML file) is likely wrong.
import { describeConnection, type TemporalSettings } from '../common/temporal-settings';

function messages(err: unknown): string {
  const parts: string[] = [];
  for (let e = err as { message?: string; cause?: unknown; details?: string } | undefined, i = 0; e && i < 6; e = e.cause as typeof e, i++) {
    if (e.message) parts.push(e.message);
    if (e.details) parts.push(e.details);
  }
  return parts.join(' | ') || String(err);
}

export function connectionProblem(err: unknown, s: TemporalSettings): string {
  const all = messages(err);
  const first = all.split('\n')[0]!.replace(/\s+/g, ' ').trim().slice(0, 300);
  let hint: string;
  if (/unauthenticated|api key|unauthori[sz]ed|invalid token|\b401\b/i.test(all)) {
    hint = "the server refused the API key: check TEMPORAL_API_KEY (or the profile's api_key)";
  } else if (
    s.security !== 'plain' &&
    // A TLS terminator (nginx, a load balancer) that checks client certificates may finish the handshake and
    // answer HTTP 400 instead of failing it.
    (/certificate|handshake|\btls\b|\bssl\b|alert|UnknownIssuer|invalid peer|InvalidCertificate|NotValidForName|peer.*closed|connection reset/i.test(all) ||
      (s.security.startsWith('mTLS') && /HTTP status code 400|status: 400 Bad Request/.test(all)))
  ) {
    hint =
      'the TLS handshake failed: check TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH (the certificate the server trusts, and its key), ' +
      'TEMPORAL_TLS_SERVER_CA_CERT_PATH and TEMPORAL_TLS_SERVER_NAME (or the profile\'s tls settings)';
  } else if (/permission ?denied|forbidden|\b403\b/i.test(all)) {
    hint = `the server refused access to namespace ${s.namespace}: check the credentials' permissions and TEMPORAL_NAMESPACE`;
  } else {
    hint = 'is the server running there? TEMPORAL_ADDRESS, --address or the profile (TEMPORAL_PROFILE) say where; TLS and keys: docs/connecting.md';
  }
  return `cannot connect to Temporal at ${describeConnection(s)}: ${hint} (${first})`;
}
