"""The start-up of ``fastcopy batch`` (a one-point copy of the sweep, as bench/bench_batch.py's "fastcopy batch of
1 point"), whole processes, interleaved between source trees, medians; the numpy script's imports alongside.

    python bench/startup.py [--rounds 21] [--chrt] TREE [TREE ...]

Each TREE is a checkout (its folder is put first on ``PYTHONPATH``), e.g. this one and a detached main
(``git worktree add --detach /tmp/base main``). Bytecode cache warm (bench/startenv.py). ``--chrt`` runs every
command under ``chrt -f 1`` (a vCPU for the command, and numpy's spinning BLAS thread no longer shares its core);
the trees' output files are compared (summary.json, which holds paths and times, left out).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_batch import _one_point_case, _startup_cmd  # noqa: E402
from startenv import warm_env  # noqa: E402

REFERENCES = {"python -c 'import numpy'": [sys.executable, "-c", "import numpy"],
              "python -c 'import numpy, hashlib, json, zlib, argparse'":
                  [sys.executable, "-c", "import numpy, hashlib, json, zlib, argparse"]}


def _files(folder: str) -> dict:
    out = {}
    for root, _, names in os.walk(folder):
        for n in names:
            if n != "summary.json":
                p = os.path.join(root, n)
                with open(p, "rb") as fh:
                    out[os.path.relpath(p, folder)] = hashlib.sha256(fh.read()).hexdigest()
    return out


def measure(trees: list, rounds: int, chrt: bool) -> tuple:
    """(median seconds per tree and reference command, whether every tree wrote the same files)."""
    pre = ["chrt", "-f", "1"] if chrt else []
    times = {k: [] for k in [*trees, *REFERENCES]}
    written = {}
    with tempfile.TemporaryDirectory(prefix="fastcopy-start-") as work:
        cmd = _startup_cmd(_one_point_case(work))
        for r in range(rounds + 1):  # (round 0: untimed, fills the bytecode cache)
            for tree in trees:
                out = os.path.join(work, f"out-{r}-{trees.index(tree)}")
                t0 = time.perf_counter()
                subprocess.run(pre + cmd(out), env=warm_env(PYTHONPATH=tree), cwd=tree, check=True,
                               capture_output=True)
                if r:
                    times[tree].append(time.perf_counter() - t0)
                if r == 1:
                    written[tree] = _files(out)
                shutil.rmtree(out)
            for name, ref in REFERENCES.items():
                t0 = time.perf_counter()
                subprocess.run(pre + ref, env=warm_env(), check=True)
                if r:
                    times[name].append(time.perf_counter() - t0)
    same = all(w == written[trees[0]] for w in written.values())
    return {k: statistics.median(v) for k, v in times.items()}, same


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="+", help="source trees to compare")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--chrt", action="store_true", help="run every command under chrt -f 1")
    args = ap.parse_args(argv)
    trees = [os.path.abspath(t) for t in args.trees]
    med, same = measure(trees, args.rounds, args.chrt)
    for name, t in med.items():
        print(f"{t * 1e3:8.1f} ms  {name}")
    print(f"output files identical across the trees: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
