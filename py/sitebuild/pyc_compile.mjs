// Compile Python sources to bytecode with Pyodide's own Python (3.12), run under Node.
//
// Usage: node pyc_compile.mjs <pyodide_dir> <work_dir>
//
// The host (sitebuild/pyc.py) prepares <work_dir>:
//   jobs.json  {"files": ["<job>/<member>.py", ...], "dfile_prefix": "/lib/python3.12/site-packages"}
//   src/<job>/<member>.py   the sources to compile
// and this script writes:
//   out/<job>/<member>.pyc  unchecked-hash bytecode for every source that compiled
//   result.json  {"version", "cache_tag", "magic", "compiled": n, "failed": {file: message}}
// The host's CPython is a different version, so its bytecode would be useless in the browser;
// this is why the compile runs in Pyodide. One run handles every file (booting costs seconds).

import path from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";

const COMPILE = String.raw`
import importlib.util
import json
import os
import py_compile
import sys

root = "/mnt/pyc"
with open(f"{root}/jobs.json") as f:
    jobs = json.load(f)
prefix = jobs["dfile_prefix"].rstrip("/")
failed = {}
compiled = 0
for rel in jobs["files"]:
    src = f"{root}/src/{rel}"
    out = f"{root}/out/{rel}c"
    member = rel.split("/", 1)[1]
    try:
        os.makedirs(os.path.dirname(out), exist_ok=True)
        py_compile.compile(
            src,
            cfile=out,
            dfile=f"{prefix}/{member}",
            doraise=True,
            invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        )
        compiled += 1
    except Exception as exc:  # syntax errors, bad encodings, null bytes: keep the source only
        failed[rel] = f"{type(exc).__name__}: {exc}".strip()[:500]
        if os.path.exists(out):
            os.remove(out)
result = {
    "version": sys.version.split()[0],
    "cache_tag": sys.implementation.cache_tag,
    "magic": importlib.util.MAGIC_NUMBER.hex(),
    "compiled": compiled,
    "failed": failed,
}
with open(f"{root}/result.json", "w") as f:
    json.dump(result, f)
`;

async function main() {
  const [pyodideDir, workDir] = process.argv.slice(2);
  if (!pyodideDir || !workDir) {
    throw new Error("usage: node pyc_compile.mjs <pyodide_dir> <work_dir>");
  }
  const indexURL = path.resolve(pyodideDir) + path.sep;
  const { loadPyodide } = await import(pathToFileURL(path.join(indexURL, "pyodide.mjs")).href);
  const pyodide = await loadPyodide({
    indexURL,
    stdout: (line) => process.stderr.write(line + "\n"),
    stderr: (line) => process.stderr.write(line + "\n"),
  });
  pyodide.FS.mkdirTree("/mnt/pyc");
  pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: path.resolve(workDir) }, "/mnt/pyc");
  pyodide.runPython(COMPILE);
  pyodide.FS.unmount("/mnt/pyc");
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`pyc_compile failed: ${err && err.stack ? err.stack : err}\n`);
    process.exit(1);
  },
);
