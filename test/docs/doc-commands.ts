// The shell commands of a markdown file: every line of ```sh / ```bash / ```shell blocks, and the `$ ` lines of
// other blocks, split into single commands (at &&, ||, ;, & and |) with shell-quote; `export A=b` and `T=...`
// lines set what later commands of the same block see, and `A=b cmd` sets it for that command alone.
import { parse } from 'shell-quote';

export interface DocCommand {
  file: string;
  /** 1-based line of the command's first line in the file. */
  line: number;
  words: string[];
  env: Record<string, string>;
  /** From an inline `npm ...` code span of the prose: a mention, so only its names and options are checked. */
  inline?: boolean;
}

/** Inline code spans of the prose that are whole npm commands (not templates with <placeholders>, [options] or ...). */
export function inlineNpmCommands(file: string, markdown: string): DocCommand[] {
  const out: DocCommand[] = [];
  let inFence = false;
  markdown.split('\n').forEach((text, i) => {
    if (/^\s*```/.test(text)) inFence = !inFence;
    if (inFence) return;
    for (const m of text.matchAll(/`(npm (?:run|start|test|ci)\b[^`]*)`/g)) {
      if (/[<[,]|\.\.\./.test(m[1]!)) continue;
      for (const words of commandsOf(m[1]!, {}).filter((w) => w[0] === 'npm')) out.push({ file, line: i + 1, words, env: {}, inline: true });
    }
  });
  return out;
}

const SHELL = new Set(['sh', 'bash', 'shell', 'console']);
const REDIRECTS = new Set(['>', '>>', '<', '>&', '<&', '<(', '2>']);
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;

export function docCommands(file: string, markdown: string): DocCommand[] {
  const lines = markdown.split('\n');
  const out: DocCommand[] = [];
  let fence: string | null = null;
  let blockEnv: Record<string, string> = {};
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const opener = /^\s*```+\s*([\w-]*)/.exec(raw);
    if (opener) {
      fence = fence === null ? opener[1]!.toLowerCase() : null;
      blockEnv = {};
      continue;
    }
    if (fence === null) continue;
    let text = raw;
    if (!SHELL.has(fence)) {
      if (!text.startsWith('$ ')) continue;
      text = text.slice(2);
    }
    const start = i;
    while (text.trimEnd().endsWith('\\') && i + 1 < lines.length) text = `${text.trimEnd().slice(0, -1)} ${lines[++i]!}`;
    for (const words of commandsOf(text, blockEnv)) {
      const env: Record<string, string> = { ...blockEnv };
      while (words.length && ASSIGNMENT.test(words[0]!)) {
        const [, k, v] = ASSIGNMENT.exec(words.shift()!)!;
        env[k!] = v!;
      }
      if (words.length === 0) Object.assign(blockEnv, env); // `T=...` alone: a shell variable for the lines below
      else if (words[0] === 'export') {
        for (const w of words.slice(1)) {
          const m = ASSIGNMENT.exec(w);
          if (m) blockEnv[m[1]!] = m[2]!;
        }
      } else out.push({ file, line: start + 1, words, env });
    }
  }
  return out;
}

/** The simple commands of one shell line, `for ... do X & done` reduced to X; $VARs from `env` expanded. */
function commandsOf(text: string, env: Record<string, string>): string[][] {
  const commands: string[][] = [[]];
  let redirected = false;
  for (const entry of parse(text, (key) => env[key] ?? `$${key}`)) {
    if (typeof entry === 'string') {
      if (!redirected) commands[commands.length - 1]!.push(entry);
      redirected = false;
    } else if ('op' in entry && REDIRECTS.has(entry.op)) redirected = true; // `> file`: the file is no command
    else if ('op' in entry && entry.op !== 'glob') commands.push([]);
    else if ('comment' in entry) break;
    else if ('pattern' in entry) commands[commands.length - 1]!.push(entry.pattern);
  }
  return commands
    .map((c) => (c[0] === 'do' ? c.slice(1) : c))
    .filter((c) => c.length > 0 && c[0] !== 'for' && c[0] !== 'done');
}
