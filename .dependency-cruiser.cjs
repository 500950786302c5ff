// The layering of the project's folders, checked by test/layering.test.ts (dependency-cruiser). Folders follow the
// way data moves in a run: entry points → cli → workflows → activities → report and sinks → run records → the RL
// math over spans (rl) → services (store, proxy, trainer, engines, agents) → libraries (chat, tinker, config,
// shared) → common. An import may only point down that line (or stay inside its own folder), and no file may import
// itself back through others, not even through type-only imports.
const LAYERS = [
  ['^(client|worker)\\.ts$', '^dev/'],
  ['^cli/'],
  ['^workflows/'],
  ['^activities/'],
  ['^sinks/', '^report/'],
  ['^records/'],
  ['^rl/'],
  ['^store/', '^proxy/', '^trainer/', '^engines/', '^agents/'],
  ['^chat/', '^tinker/', '^config/', '^shared/'],
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
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|test/|packages/agents/dist|\\.temporal|\\.data|\\.stryker-tmp)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
