"""Run the benchmark suite and print its tables, all ratios measured in this one run:

1. the pytest-benchmark suite (bench/bench_*.py): op, size, GB/s, ratio to np.copyto and to the plain-numpy way;
2. every issue-11 speed target, each case interleaved with its baselines (bench/interleaved.py: the ratios that
   survive this machine's drifting bandwidth), with the target and whether this run met it;
3. the layout cases again on one thread (FASTCOPY_THREADS=1);
4. the ceiling: the same kernels called bare, without any fastcopy code around them (bench/bare_layout.py), and
   the NZ -> ND rows through the API beside the bare job of the same plan (bench/bare_layout.py --api);
5. per-call overheads (cached 1 KiB call, new parameters and a repeated call per op family, first call into a
   fresh TPipe), where a new plan's time goes (bench/plan_floor.py) and process start-up (import, one
   `fastcopy run` of a small case).

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
import textwrap
import time
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


def _per_call(fn, args_list) -> float:
    """Seconds per call of ``fn(*args)`` over a list of argument tuples (each used once: never-seen parameters)."""
    t0 = time.perf_counter()
    for args in args_list:
        fn(*args)
    return (time.perf_counter() - t0) / len(args_list)


def call_overhead() -> list[str]:
    import numpy as np

    from fastcopy import DataCopy, DataCopyParams, GlobalTensor, TPipe, TPosition

    from fastcopy.dma import kernels

    kernels.load()  # numba loads lazily (on the first call that benefits): not part of any timed row here
    pipe = TPipe(product="ATLAS_A2")
    gm = GlobalTensor(np.zeros(512, np.float16))
    ub = pipe.alloc(TPosition.VECIN, "half", 8192)
    p = DataCopyParams(1, 32)
    DataCopy(ub, gm, p)
    n = 20000
    cached = min(timeit.repeat(lambda: DataCopy(ub, gm, p), number=n, repeat=5)) / n
    out = [_row("1 KiB DataCopy GM->UB, plan cached (per call)", f"{cached * 1e6:.2f} us", "<= 1.0 us",
                cached <= 1e-6)]
    # first call of never-seen parameters, per op family (each parameter set used once; kernels warm: every
    # numba specialisation loaded first, a one-time cost per process that no new-parameter call pays again)
    import plan_floor
    from fastcopy.cli.warmup import warmup

    warmup()
    bufs = plan_floor.bench_buffers(pipe)
    # fresh destinations per pass: new plans. Five passes: the plans new calls keep (plan caches) bring the
    # collector's full pass (tens of ms in a process with numba loaded) every ~1000 calls, and one landing in a
    # pass of 200 calls adds ~100 us per call to that pass; the median of five outvotes two such passes (a
    # gc.collect() before each pass instead measured 2-3 us more per call: the ~20 calls after a full collection
    # took twice as long as the rest)
    passes = [plan_floor.new_param_calls(bufs, r) for r in (1, 2, 3, 5, 6)]
    for name in passes[0]:
        times = []
        for fams in passes:
            fn, calls = fams[name]
            fn(*calls[0])
            times.append(_per_call(fn, calls[1:]))
        t = float(np.median(times))
        out.append(_row(f"first call of new parameters: {name}", f"{t * 1e6:.1f} us", "<= 30 us", t <= 30e-6))
    # the same calls repeated (one parameter set each; DataCopy forms and DataCopyPad: the prepared-call cache)
    for name, (fn, calls) in plan_floor.new_param_calls(bufs, 4).items():
        args = calls[len(calls) // 2]
        fn(*args)
        fn(*args)
        t = min(timeit.repeat(lambda: fn(*args), number=2000, repeat=5)) / 2000
        out.append(_row(f"repeated call: {name}", f"{t * 1e6:.2f} us"))
    # first 64 MiB DataCopy into a fresh TPipe (its buffer new, its definedness lazy) vs the same call repeated
    # (the median of five repeats: the best of them flattered the repeat), and the alloc that made the buffer
    size = 64 << 20
    src = GlobalTensor(np.random.default_rng(0).integers(0, 2**16, size // 2, dtype=np.uint16))
    q = DataCopyParams(size // (1 << 20), 1 << 15)
    firsts, again, allocs = [], [], []
    for _ in range(5):
        t0 = time.perf_counter()
        fp = TPipe(capacities={"UB": size})
        x = fp.alloc(TPosition.VECIN, "uint16", size // 2)
        t1 = time.perf_counter()
        DataCopy(x, src, q)
        firsts.append(time.perf_counter() - t1)
        allocs.append(t1 - t0)
        again.append(float(np.median(timeit.repeat(lambda x=x: DataCopy(x, src, q), number=1, repeat=5))))
        del fp, x
    f, r = float(np.median(firsts)), float(np.median(again))
    out.append(_row("first 64 MiB DataCopy into a fresh TPipe / repeated", f"{f * 1e3:.1f} / {r * 1e3:.1f} ms",
                    "<= 2x", f <= 2 * r))
    out.append(_row("  its TPipe + alloc (64 MiB UB made, poison filled)",
                    f"{float(np.median(allocs)) * 1e3:.1f} ms"))
    return out


def _row(name: str, value: str, target: str = "", met: bool | None = None) -> str:
    verdict = "" if met is None else ("met" if met else "NOT met")
    return f"| {name:60} | {value:>18} | {target:>10} | {verdict:>7} |"


def _wall(cmd, runs: int = 5, **kw) -> float:
    """Median wall-clock seconds of a whole process (after one untimed run: numba's cache warm)."""
    subprocess.run(cmd, capture_output=True, **kw)
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, **kw)
        ts.append(time.perf_counter() - t0)
    return sorted(ts)[len(ts) // 2]


def startup(rounds: int = 7) -> list[str]:
    """Process start-up, interleaved rounds, medians. Python's bytecode cache is on (a private folder, filled by an
    untimed first run; bench/startenv.py), as for any user; the same import with no bytecode cache at all (every
    module compiled from source, as under PYTHONDONTWRITEBYTECODE) is shown beside it, and numpy + ml_dtypes
    alone for scale."""
    from startenv import cold_env, warm_env

    py = sys.executable
    env = warm_env(PYTHONPATH=str(HERE.parent))
    cold = cold_env(PYTHONPATH=str(HERE.parent))

    def timed(code, e):
        run = subprocess.run([py, "-c", "import time; t=time.perf_counter()\n" + code +
                              "\nprint(time.perf_counter()-t)"], capture_output=True, text=True, env=e)
        return float(run.stdout.split()[-1])

    first_code = ("import numpy as np, fastcopy as fc; p=fc.TPipe(); u=p.alloc(fc.TPosition.VECIN,'half',512); "
                  "fc.DataCopy(u, fc.GlobalTensor(np.zeros(512,np.float16)), 512)")
    codes = {"fc": ("import fastcopy", env), "np": ("import numpy, ml_dtypes", env),
             "cold": ("import fastcopy", cold), "first": (first_code, env)}
    for code, e in codes.values():
        timed(code, e)  # untimed: the bytecode (and numba) caches filled
    got = {k: [] for k in codes}
    for _ in range(rounds):
        for k, (code, e) in codes.items():
            got[k].append(timed(code, e))
    imp, npy, cold_imp, first = (sorted(got[k])[rounds // 2] for k in ("fc", "np", "cold", "first"))
    bare = _wall([py, "-c", "pass"], env=env)
    with tempfile.TemporaryDirectory() as tmp:
        case = str(HERE.parent / "examples" / "datacopy_tiles.toml")
        cli = _wall([py, "-m", "fastcopy", "run", case, "-o", tmp], env=env)
    t_warm = subprocess.run([py, "-m", "fastcopy", "warmup"], capture_output=True, text=True, env=env).stdout
    return [_row("fresh process, numba cache warm: import fastcopy", f"{imp:.3f} s", "<= 0.2 s", imp <= 0.2),
            _row("  (import numpy, ml_dtypes alone, same conditions)", f"{npy:.3f} s"),
            _row("  (import fastcopy, no bytecode cache: all compiled)", f"{cold_imp:.3f} s"),
            _row("fresh process: import fastcopy + first DataCopy", f"{first:.3f} s"),
            _row("fastcopy run examples/datacopy_tiles.toml (whole process)", f"{cli:.3f} s", "<= 0.4 s", cli <= 0.4),
            _row("  (python -c pass, whole process, for scale)", f"{bare:.3f} s"),
            _row("fastcopy warmup (all kernels, cache warm)", t_warm.strip().split()[-2] + " s"
                 if t_warm.strip() else "?")]


def cube_in_rows() -> list[str]:
    """LoadData of a full 64 KiB L0A/L0B tile and img2col of a 1 MiB feature map (bench/cube_in.py)."""
    import cube_in

    return cube_in.rows()


def sections(expr: str | None) -> list[str]:
    """Every table of the report, in order, as markdown lines."""
    out = []

    def emit(*lines):
        for line in lines:
            out.append(line)
            print(line, flush=True)

    emit("The pytest-benchmark suite (bench/bench_*.py; each case timed minutes apart from its baselines):", "")
    emit(*table(run_suite(expr)), "")
    if not expr:
        import bare_layout
        import interleaved

        emit("The issue-11 speed targets, each case timed interleaved with its baselines (2 worker threads):", "")
        emit(*interleaved.rows(), "")
        emit("The cube-in ops (bench/cube_in.py):", "")
        emit(*cube_in_rows(), "")
    if not expr or "cube" in expr:
        import cube_out

        emit("The cube-out ops (bench/cube_out.py):", "")
        emit(*cube_out.rows(), "")
    if not expr:
        emit("The layout cases again with FASTCOPY_THREADS=1 (on a busy machine one thread can beat two):", "")
        env = dict(os.environ, FASTCOPY_THREADS="1", PYTHONPATH=str(HERE.parent))
        one = subprocess.run([sys.executable, str(HERE / "interleaved.py"), "4096"], env=env, capture_output=True,
                             text=True).stdout
        emit(*one.rstrip().splitlines(), "")
        emit("The ceiling: the same kernels called bare, without any fastcopy code around them "
             "(bench/bare_layout.py):", "")
        emit(*bare_layout.rows(), "")
        emit("The NZ -> ND layout rows through the API beside the bare job of the same plan, each into its own "
             "output (bench/bare_layout.py --api):", "")
        emit(*bare_layout.api_rows(), "")
    emit(f"| {'overhead':60} | {'measured':>18} | {'target':>10} | {'':>7} |",
         f"|{'-' * 62}|{'-' * 20}|{'-' * 12}|{'-' * 9}|")
    emit(*call_overhead(), *startup())
    if not expr:
        import bench_batch

        emit(*bench_batch.rows())
        import plan_floor

        emit("", "Where the first call of new parameters spends its time (bench/plan_floor.py):", "")
        emit(*plan_floor.rows())
    return out


def write_readme(path: pathlib.Path, body: list[str], machine: str) -> None:
    """Replace the README's "## Performance" section (up to the next "## " heading) with this run."""
    import datetime

    text = path.read_text()
    start = text.index("## Performance")
    end = text.index("\n## ", start + 1) + 1
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    intro = (f"Generated by `python bench/report.py --readme README.md` on {when} ({machine}). Ratios are speed "
             "relative to the baseline measured in the same run (above 1 = fastcopy faster): `np.copyto` of the same "
             "bytes (single-threaded, this machine's memory-bandwidth yardstick) and the plain-numpy way "
             "(reshape/transpose/copy, slicing). **Noise:** this VM shares two cores and its memory bandwidth with "
             "several other jobs; `np.copyto` of 32 MiB measures anywhere between 2 and 9 GB/s within an hour, so "
             "read ratios measured together, never absolute times across runs, and expect a quiet machine to do "
             "better on the two-thread rows. Which kernel runs which call, and why: docs/performance.md.")
    head = ["## Performance", "", *textwrap.wrap(intro, 112, break_on_hyphens=False), ""]
    path.write_text(text[:start] + "\n".join(head + body).rstrip() + "\n\n" + text[end:])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-k", default=None, help="pytest -k expression selecting benchmarks")
    ap.add_argument("--readme", type=pathlib.Path, default=None,
                    help="rewrite the Performance section of this README with the tables of this run")
    args = ap.parse_args(argv)
    import platform

    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    machine = f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"
    print(f"fastcopy benchmarks on {machine}")
    print()
    body = sections(args.k)
    if args.readme is not None:
        write_readme(args.readme, body, machine)
    return 0


if __name__ == "__main__":
    sys.exit(main())
