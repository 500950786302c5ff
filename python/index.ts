// Python value emulation, one import for the code that writes or reads what Python's code would: json.dumps and
// json.loads, repr() and str(), literals as ast.literal_eval reads them, and Python's whitespace.
export { PyFloat, floatOf, intText, isPyDict, isPyList, pyGet, pyItems, type PyDict, type PyJson, type PyValue } from './values';
export { pyFloatRepr, pyJsonFloat } from './float-text';
export { pyJsonDumps, pyJsonString, type DumpsOptions } from './json-dumps';
export { PyJsonError, pyJsonLoads, pyJsonToPlain } from './json-loads';
export { pyRepr, pyReprString, pyStr } from './repr';
export { literalEvalMaybe, parsePythonLiteral } from './literal';
export { PY_SPACE, PY_WORD, isPySpace, pyIsBlank, pyLstrip, pyRstrip, pyStrip } from './text';
