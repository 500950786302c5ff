// The layering of the project's folders, checked by test/layering.test.ts (dependency-cruiser). Folders follow the
// way data moves in a run: entry points → cli → workflows → activities → report and sinks → run records → the
// Agent-lightning 1.0 gateway (mounted on the store's server) → services (store, proxy, trainer, engines, agents) → the RL math over spans (rl, pure: no service below it) → libraries
// (chat, tinker, config, shared, and spans: the span attribute format the store and rl both read) → Python value
// emulation (python) → common. An import may only point down that line (or stay inside its
// own folder), and no file may import itself back through others, not even through type-only imports.
const LAYERS = [
  ['^(client|worker)\\.ts$', '^dev/'],
  ['^cli/'],
  ['^workflows/'],
  ['^activities/'],
  ['^sinks/', '^report/'],
  ['^records/'],
  ['^gateway/'],
  ['^store/', '^proxy/', '^trainer/', '^engines/', '^agents/'],
  ['^rl/'],
  ['^chat/', '^tinker/', '^config/', '^shared/', '^spans/'],
  ['^python/'],
  ['^common/'],
];

const layerRules = [];
LAYERS.forEach((here, i) => {
  const above = LAYERS.slice(0, i).flat();
  if (above.length === 0) return;
  layerRules.push({
    name: `layer-${i}-imports-down`,
    comment: `${here.join(', ')} may not import from a layer above it (${above.join(', ')})`,
    severity: 'error',
    from: { path: here.join('|') },
    to: { path: above.join('|') },
  });
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'no file imports itself back through others, type-only imports included',
      severity: 'error',
      from: { pathNot: '^test/' },
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'run-policy-reads-only-the-database',
      comment: 'store/run-policy/ reads only the store\'s database layer: the operations, the LightningStore and the server consult it, it never imports them back',
      severity: 'error',
      from: { path: '^store/run-policy/' },
      to: { path: '^store/', pathNot: '^store/(run-policy/|store-db\\.ts$|rows\\.ts$|errors\\.ts$|types\\.ts$)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|test/|packages/agents/dist|\\.temporal|\\.data|\\.stryker-tmp)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
