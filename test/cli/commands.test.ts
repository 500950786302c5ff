// The client's command table and its usage text agree: every command the table runs is in --help, and every
// command --help lists runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COMMANDS } from '../../cli/commands';
import { USAGE } from '../../cli/usage';

test('every command in the table is in the usage text, and every command there is in the table', () => {
  const section = USAGE.split('commands:\n')[1]!.split('\n\n')[0]!;
  const listed = [...section.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((m) => m[1]!);
  assert.deepEqual([...new Set(listed)].sort(), Object.keys(COMMANDS).sort());
});
