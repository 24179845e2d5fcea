"""Run the benchmark suite and print one table: op, size, GB/s, ratio to np.copyto and to the plain-numpy way;
then the large cases again, measured interleaved with their baselines (bench/interleaved.py: the ratios that
survive this machine's drifting bandwidth); then the per-call overhead of a 1 KiB DataCopy (cached plan / new
parameters) and process start-up costs.

    python bench/report.py            # whole suite (a few minutes)
    python bench/report.py -k nz      # a subset (pytest -k expression)

Conventions for bench/bench_*.py: ``benchmark.group`` names op and size ("nd2nz-4096x4096-f16");
``benchmark.extra_info["bytes"]`` is the bytes moved; baselines are recognised by ``extra_info["role"]``
("copyto" / "numpy") or by "copyto" / "numpy" in the test name.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import timeit

HERE = pathlib.Path(__file__).resolve().parent


def run_suite(expr: str | None) -> dict:
    out = pathlib.Path(tempfile.mkdtemp()) / "bench.json"
    cmd = [sys.executable, "-m", "pytest", str(HERE), "-q", "-p", "no:cacheprovider", "--benchmark-only",
           f"--benchmark-json={out}", "-o", "python_files=bench_*.py"]
    if expr:
        cmd += ["-k", expr]
    subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text()) if out.exists() else {"benchmarks": []}


def _role(b: dict) -> str:
    role = (b.get("extra_info") or {}).get("role")
    if role:
        return role
    name = b["name"].lower()
    return "copyto" if "copyto" in name else "numpy" if "numpy" in name else "fastcopy"


def table(data: dict) -> list[str]:
    groups: dict[str, list] = {}
    for b in data["benchmarks"]:
        groups.setdefault(b.get("group") or b["name"], []).append(b)
    rows = [f"| {'op / case':58} | {'median':>10} | {'GB/s':>6} | {'x copyto':>8} | {'x numpy':>7} |",
            f"|{'-' * 60}|{'-' * 12}|{'-' * 8}|{'-' * 10}|{'-' * 9}|"]
    for group in sorted(groups):
        items = groups[group]
        base = {_role(b): b["stats"]["median"] for b in items if _role(b) != "fastcopy"}
        for b in items:
            if _role(b) != "fastcopy":
                continue
            med = b["stats"]["median"]
            nbytes = (b.get("extra_info") or {}).get("bytes", 0)
            gbs = nbytes / med / 1e9 if nbytes else float("nan")
            r_copy = base["copyto"] / med if "copyto" in base else float("nan")
            r_np = base["numpy"] / med if "numpy" in base else float("nan")
            name = f"{group}: {b['name'].split('[')[0].removeprefix('test_')}"
            rows.append(f"| {name[:58]:58} | {_fmt(med):>10} | {gbs:6.2f} | {r_copy:8.2f} | {r_np:7.2f} |")
    return rows


def _fmt(seconds: float) -> str:
    for unit, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def call_overhead() -> list[str]:
    import numpy as np

    from fastcopy import DataCopy, DataCopyParams, GlobalTensor, TPipe, TPosition
    from fastcopy.ops import datacopy

    pipe = TPipe(product="ATLAS_A2")
    gm = GlobalTensor(np.zeros(512, np.float16))
    ub = pipe.alloc(TPosition.VECIN, "half", 8192)
    p = DataCopyParams(1, 32)
    DataCopy(ub, gm, p)
    n = 20000
    cached = min(timeit.repeat(lambda: DataCopy(ub, gm, p), number=n, repeat=5)) / n
    params = [DataCopyParams(1, 32, 0, g) for g in range(200)]

    def fresh():
        datacopy._plan_params.cache_clear()
        for q in params:
            DataCopy(ub, gm, q)

    fresh()
    new = min(timeit.repeat(fresh, number=5, repeat=3)) / (5 * len(params))
    return [f"| 1 KiB DataCopy GM->UB, cached plan (per call)              | {cached * 1e6:6.2f} us |",
            f"| 1 KiB DataCopy GM->UB, new parameter set (per call)        | {new * 1e6:6.2f} us |"]


def startup() -> list[str]:
    code = ("import time; t=time.perf_counter(); import numpy as np, fastcopy as fc; "
            "p=fc.TPipe(); u=p.alloc(fc.TPosition.VECIN,'half',512); "
            "fc.DataCopy(u, fc.GlobalTensor(np.zeros(512,np.float16)), 512); print(time.perf_counter()-t)")
    t_first = float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout)
    t_warm = subprocess.run([sys.executable, "-m", "fastcopy", "warmup"], capture_output=True, text=True).stdout
    return [f"| fresh process: import fastcopy + first cached-kernel call | {t_first:6.3f} s  |",
            f"| fastcopy warmup (all kernels, cache warm)                 | {t_warm.strip().split()[-2]} s |"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-k", default=None, help="pytest -k expression selecting benchmarks")
    args = ap.parse_args(argv)
    import platform

    print(f"fastcopy benchmarks on {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}")
    print()
    print("\n".join(table(run_suite(args.k))))
    print()
    if not args.k:
        import interleaved

        print("\n".join(interleaved.rows()))
        print()
    print("| overhead                                                   |           |")
    print("|------------------------------------------------------------|-----------|")
    print("\n".join(call_overhead() + startup()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
