"""``fastcopy batch --jobs 2`` vs ``--dask local:2``: 10,000 generated small points and 200 large points (>= 16 MiB
of files each), wall time and points/s, as a user runs the commands (fresh processes, fresh output folders).

    python bench/bench_dask.py [--small 10000] [--large 200] [--large-mib 8] [--repeat 1] [--tmp DIR]
    python bench/bench_dask.py --chunks 10,25,50,100,200   # also: points/s per --chunk-size on the small sweep

Each point of the large sweep writes a ``--large-mib`` MiB input, the same-size output and a mask of half that size
(half elements): 2.5x ``--large-mib`` MiB of files; the default 8 MiB gives 20 MiB a point (4 GB a run, removed
after each run). "batch s" is the time ``fastcopy batch`` reports for the points themselves; "wall s" adds the
interpreter, numba and (for --dask) the LocalCluster start and stop: their difference is the fixed cost, the
ratio of the batch times the per-point cost of the cluster path. Repeats alternate the order of the two commands
(so neither always runs while the disk writes back the other's files).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SMALL = """# {points} small basic-DataCopy points: strided gathers GM -> VECIN -> GM (half)
name = "small"
product = "ATLAS_A2"
seed = 1000
outputs = ["yGm"]

[sweep]
bc = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
bl = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
gap = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
rep = {reps}

[buffers.xGm]
dtype = "half"
shape = ["=bc * (bl + gap) * 16 + rep * 16"]
init = {{kind = "uniform", low = -1.0, high = 1.0}}

[buffers.xLocal]
position = "VECIN"
dtype = "half"
count = "=bc * bl * 16"

[buffers.yGm]
dtype = "half"
shape = ["=bc * bl * 16"]

[[ops]]
api = "DataCopy"
dst = "xLocal"
src = "xGm[rep * 16]"
params.DataCopyParams = {{blockCount = "=bc", blockLen = "=bl", srcGap = "=gap", dstGap = 0}}

[[ops]]
api = "DataCopy"
dst = "yGm"
src = "xLocal"
params = {{count = "=bc * bl * 16"}}
"""

LARGE = """# {points} large points: a {mib} MiB half tensor GM -> VECIN (a UB of {ub} bytes) -> GM
name = "large"
product = "ATLAS_A2"
seed = 7
outputs = ["yGm"]
capacities = {{UB = {ub}}}

[sweep]
k = {ks}

[buffers.xGm]
dtype = "half"
shape = [{n}]
init = {{kind = "uniform", low = "=-1.0 - k", high = "=1.0 + k"}}

[buffers.xLocal]
position = "VECIN"
dtype = "half"
count = {n}

[buffers.yGm]
dtype = "half"
shape = [{n}]

[[ops]]
api = "DataCopy"
dst = "xLocal"
src = "xGm"
params.DataCopyParams = {{blockCount = 64, blockLen = {bl}, srcGap = 0, dstGap = 0}}

[[ops]]
api = "DataCopy"
dst = "yGm"
src = "xLocal"
params.DataCopyParams = {{blockCount = 64, blockLen = {bl}, srcGap = 0, dstGap = 0}}
"""


def small_case(points: int) -> str:
    reps = points // 1000
    if reps * 1000 != points or reps < 1:
        raise SystemExit("--small: a multiple of 1000")
    return SMALL.format(points=points, reps=list(range(reps)))


def large_case(points: int, mib: int) -> str:
    n = mib * (1 << 20) // 2
    return LARGE.format(points=points, mib=mib, n=n, ub=n * 2 + 65536, ks=list(range(points)),
                        bl=n * 2 // 32 // 64)  # 64 bursts (blockLen is at most 65535 blocks)


def run(case: str, out: str, how: list) -> tuple:
    """(wall s, batch s, points ok) of one ``fastcopy batch`` process."""
    cmd = [sys.executable, "-m", "fastcopy", "batch", case, "-o", out, "--no-progress", *how]
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    m = re.search(r"^total\s+(\d+)\s+(\d+)\s+(\d+).*?([\d.]+) wall$", res.stdout, re.M)
    if res.returncode or not m:
        raise SystemExit(f"{' '.join(cmd)} failed ({res.returncode}):\n{res.stdout[-2000:]}\n{res.stderr[-3000:]}")
    return wall, float(m.group(4)), int(m.group(2))


def chunk_sweep(case: str, tmp: str, sizes: list, workers: int = 2) -> list:
    """points/s of run_batch on one LocalCluster per --chunk-size (cluster start not counted)."""
    from distributed import Client, LocalCluster

    from fastcopy.golden import run_batch

    rows = []
    with LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=":0", silence_logs=40) as lc, \
            Client(lc) as client:
        run_batch([case], os.path.join(tmp, "warm"), client=client, chunk_size=100)  # workers' numba, caches
        for size in sizes:
            out = os.path.join(tmp, f"chunk{size}")
            rep = run_batch([case], out, client=client, chunk_size=size)
            rows.append((size, len(rep.outcomes) / rep.seconds, rep.seconds, rep.ok))
            shutil.rmtree(out)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", type=int, default=10_000, help="small points (a multiple of 1000; 0: skip)")
    ap.add_argument("--large", type=int, default=200, help="large points (0: skip)")
    ap.add_argument("--large-mib", type=int, default=8, help="MiB of input per large point (files: 2.5x this)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--tmp", default=None, help="where to write (default: the system temp folder)")
    ap.add_argument("--chunks", default="", help="comma-separated --chunk-size values to measure on the small sweep")
    args = ap.parse_args(argv)
    subprocess.run([sys.executable, "-m", "fastcopy", "warmup"], capture_output=True)  # numba cache on disk
    hows = {"--jobs 2": ["--jobs", "2"], "--dask local:2": ["--dask", "local:2"]}
    work = []
    if args.small:
        work.append(("small", args.small, small_case(args.small), 0.0))
    if args.large:
        work.append(("large", args.large, large_case(args.large, args.large_mib), 2.5 * args.large_mib))
    print(f"fastcopy batch, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}, writing to "
          f"{args.tmp or tempfile.gettempdir()}, median of {args.repeat}")
    print(f"{'sweep':<22} {'how':<16} {'wall s':>7} {'batch s':>8} {'points/s':>9} {'MiB/s':>7} {'vs --jobs 2':>11}")
    with tempfile.TemporaryDirectory(prefix="fastcopy-dask-bench-", dir=args.tmp) as tmp:
        for name, points, text, mib in work:
            case = os.path.join(tmp, f"{name}.toml")
            with open(case, "w") as fh:
                fh.write(text)
            got = {h: [] for h in hows}
            for r in range(args.repeat):
                for how, flags in (list(hows.items()) if r % 2 == 0 else list(hows.items())[::-1]):
                    out = os.path.join(tmp, f"out-{name}-{r}-{how.split()[-1].replace(':', '')}")
                    wall, batch, ok = run(case, out, flags)
                    if ok != points:
                        raise SystemExit(f"{name} {how}: {ok} of {points} points ok")
                    got[how].append((wall, batch))
                    shutil.rmtree(out)
            base = statistics.median(b for _, b in got["--jobs 2"])
            label = f"{name} {points}" + (f" x {mib:g} MiB" if mib else "")
            for how, runs in got.items():
                wall = statistics.median(w for w, _ in runs)
                batch = statistics.median(b for _, b in runs)
                rate = f"{points * mib / batch:7.0f}" if mib else f"{'':7}"
                print(f"{label:<22} {how:<16} {wall:7.2f} {batch:8.2f} {points / batch:9.0f} {rate} "
                      f"{base / batch:10.2f}x")
        if args.chunks and args.small:
            sizes = [int(s) for s in args.chunks.split(",")]
            print(f"\n--dask (LocalCluster of 2), {args.small} small points, run_batch in-process, per chunk size")
            print(f"{'chunk':>6} {'points/s':>9} {'batch s':>8}")
            for size, rate, secs, ok in chunk_sweep(os.path.join(tmp, "small.toml"), tmp, sizes):
                print(f"{size:6d} {rate:9.0f} {secs:8.2f}{'' if ok else '  (failures!)'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
