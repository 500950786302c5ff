// js-tiktoken publishes its rank files as subpath exports, which moduleResolution "node" cannot see; this states
// the shape its own dist/ranks/o200k_base.d.ts gives.
declare module 'js-tiktoken/ranks/o200k_base' {
  const encoder: { pat_str: string; special_tokens: Record<string, number>; bpe_ranks: string };
  export default encoder;
}
