// The native libraries tml-renderers (PyPI 0.2.1, used by the tml_v0 parity check) binds at import: its extension
// looks for a libtorch_cpu.so already loaded in the process ("torch's stable ABI"). The parity venv keeps its torch
// stand-in (test/chat/parity/torch-stub) for the Python side, so these come from PyPI's torch 2.10.0 wheel (plus the
// two CUDA runtime libraries libtorch_cpu.so links against), downloaded with pip --no-deps, of which only five .so
// files are kept; the wheels are deleted. The Python side loads them with ctypes (cookbook_parity.py) before importing
// tml_renderers. Kept in a per-user cache outside the work tree (~/.cache/agl-temporal/libtorch-cpu-2.10.0, or
// AGL_LIBTORCH_DIR) so a fresh clone (CI) does not download the ~900 MB wheel again; the first build on a machine
// takes a minute or more.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const LIBTORCH_WHEELS = ['torch==2.10.0', 'nvidia-cuda-runtime-cu12==12.8.90', 'nvidia-cuda-cupti-cu12==12.8.90'];
/** In load order: each one's dependencies before it. */
export const LIBTORCH_LIBS = ['libgomp.so.1', 'libcudart.so.12', 'libcupti.so.12', 'libc10.so', 'libtorch_cpu.so'];

const EXTRACT = `
import sys, zipfile, pathlib
wheels, out, names = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), set(sys.argv[3:])
for w in wheels.glob("*.whl"):
    with zipfile.ZipFile(w) as z:
        for n in z.namelist():
            if n.rsplit("/", 1)[-1] in names and "/lib/" in n:
                (out / n.rsplit("/", 1)[-1]).write_bytes(z.read(n))
missing = [n for n in names if not (out / n).exists()]
if missing: sys.exit(f"not in the wheels: {missing}")
`;

/** The directory holding LIBTORCH_LIBS; `python` is any venv's python (its pip downloads the wheels). */
export async function libtorchCpuDir(python: string): Promise<string> {
  const dir = process.env.AGL_LIBTORCH_DIR ?? path.join(os.homedir(), '.cache', 'agl-temporal', 'libtorch-cpu-2.10.0');
  const lib = path.join(dir, 'lib');
  const stamp = path.join(dir, '.installed');
  const want = JSON.stringify([LIBTORCH_WHEELS, LIBTORCH_LIBS]);
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === want && LIBTORCH_LIBS.every((n) => existsSync(path.join(lib, n)))) return lib;
  rmSync(dir, { recursive: true, force: true });
  const wheels = path.join(dir, 'wheels');
  mkdirSync(wheels, { recursive: true });
  mkdirSync(lib, { recursive: true });
  const started = Date.now();
  process.stderr.write(`[libtorch-cpu] downloading ${LIBTORCH_WHEELS.join(' ')} (torch is ~900 MB) for its native libraries\n`);
  await run(python, ['-m', 'pip', 'download', '--quiet', '--disable-pip-version-check', '--no-deps', '-d', wheels, ...LIBTORCH_WHEELS], { maxBuffer: 64 << 20, timeout: 15 * 60_000 });
  await run(python, ['-c', EXTRACT, wheels, lib, ...LIBTORCH_LIBS], { timeout: 5 * 60_000 });
  rmSync(wheels, { recursive: true, force: true });
  writeFileSync(stamp, want);
  process.stderr.write(`[libtorch-cpu] ready in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  return lib;
}
