// Writes a run's report to <logPath>/report.html (atomically, so a browser never reads half of one).
import path from 'node:path';
import { runPaths, writeFileAtomic } from '../records/run-files';
import { loadRun, type RunData } from './run-data';
import { renderReport } from './render-html';

export const reportPath = (logPath: string) => path.join(runPaths(logPath).dir, 'report.html');

/** Writes the report of the runs to `file`; returns its path. */
export function writeReport(runs: RunData[], file: string): string {
  writeFileAtomic(file, renderReport(runs));
  return file;
}

/** Rewrites <logPath>/report.html from the run's files. */
export function writeRunReport(logPath: string, over: Parameters<typeof loadRun>[1] = {}): string {
  return writeReport([loadRun(logPath, over)], reportPath(logPath));
}
