// A webpack loader for the replay test's workflow bundle: instruments the project's TypeScript with Istanbul before
// swc strips its types, so the coverage that replays report is in the source's own lines and columns (the loader of
// @temporalio/nyc-test-coverage instruments swc's output, whose positions differ from the source's).
'use strict';
const { createInstrumenter } = require('istanbul-lib-instrument');

// Istanbul's default parser plugins (@istanbuljs/schema), and TypeScript.
const PARSER_PLUGINS = ['asyncGenerators', 'bigInt', 'classProperties', 'classPrivateProperties', 'classPrivateMethods', 'dynamicImport', 'importMeta', 'numericSeparator', 'objectRestSpread', 'optionalCatchBinding', 'topLevelAwait', 'typescript'];

module.exports = function instrumentTypeScript(source) {
  const instrumenter = createInstrumenter({ esModules: true, produceSourceMap: false, parserPlugins: PARSER_PLUGINS });
  return instrumenter.instrumentSync(source, this.resourcePath);
};
