"""``fastcopy batch`` over 1000 small generated cases (bench/cases/datacopy_sweep_1000.toml), --jobs 1 and 2,
side by side with the plain-numpy loop doing the same work (bench/numpy_gen_data.py).

Wall-clock comparison of the commands as a user runs them (fresh output folders, interpreter start included;
median of --repeat runs, the commands interleaved), and a check that fastcopy and the numpy loop write the same
bytes in every file (input, golden, mask and manifest.json). Two more rows put the numbers in context: the numpy
loop with the smaller manifest of its first version (``--simple-manifest``), and two numpy loops run at once
(what two processes gain on this machine: the ceiling of ``--jobs 2`` over ``--jobs 1``)::

    python bench/bench_batch.py [--repeat 3] [--tmp /dev/shm] [--breakdown] [--no-bytecode]

Every command runs as a user's would: with Python's bytecode cache (a private folder filled by an untimed import
first; bench/startenv.py). ``--no-bytecode`` measures with none (PYTHONDONTWRITEBYTECODE, the development VM's
setting): fastcopy then compiles its whole source at every start, while numpy loads its installed bytecode.

In-process timings (no interpreter start), with pytest-benchmark::

    python -m pytest bench/bench_batch.py --benchmark-only --benchmark-group-by=group
"""

from __future__ import annotations

import argparse
import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import pytest

HERE = pathlib.Path(__file__).resolve().parent
SWEEP = HERE / "cases" / "datacopy_sweep_1000.toml"
NUMPY_SCRIPT = HERE / "numpy_gen_data.py"
POINTS = 1000


def _fastcopy_cmd(jobs: int, out: str) -> list:
    return [sys.executable, "-m", "fastcopy", "batch", str(SWEEP), "-o", out, "--jobs", str(jobs), "--no-progress"]


def _numpy_cmd(out: str, *more) -> list:
    return [sys.executable, str(NUMPY_SCRIPT), "-o", out, *more]


def _one_point_case(folder: str) -> str:
    """The sweep with one point (bc = bl = 1, gap = 0), written into ``folder``: a batch of it is start-up (the
    interpreter, the imports, the case loaded and point 0 validated) plus one point."""
    import re

    text = re.sub(r"(?m)^(bc|bl|gap) = \[(\d+),.*\]$", r"\1 = [\2]", SWEEP.read_text())
    path = os.path.join(folder, "datacopy_sweep_1.toml")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def _startup_cmd(case: str):
    return lambda out: [sys.executable, "-m", "fastcopy", "batch", case, "-o", out, "--jobs", "1", "--no-progress"]


def _bound(j1: float, start: float, ceiling: float) -> float:
    """The best ``--jobs 2`` / ``--jobs 1`` ratio a batch can reach: ``--jobs 1`` takes ``j1`` = start-up ``start``
    plus the points' work W; with two processes the work runs at most ``ceiling`` times as fast (what two numpy
    loops at once reach) and the start-up stays: (S + W) / (S + W / ceiling)."""
    work = max(j1 - start, 0.0)
    return j1 / (start + work / ceiling)


def _needs_for(target: float, start: float, ceiling: float) -> str:
    """What ``--jobs 2`` >= ``target`` x ``--jobs 1`` needs, from :func:`_bound`: (S + W) / (S + W / c) >= t holds
    when W (1 - t / c) >= (t - 1) S, so never when the ceiling c is at most t (the ratio tends to c as W grows)."""
    if ceiling <= target:
        return (f"out of reach at this ceiling ({ceiling:.2f}x <= {target}x: the ratio tends to the ceiling as the "
                f"points' work grows); it needs a machine where two processes reach more than {target}x")
    need = (target - 1) * start / (1 - target / ceiling)
    return (f"the points' work W >= {need:.2f} s at this start-up ({start:.2f} s) and ceiling ({ceiling:.2f}x), "
            f"= {need / start:.1f}x the start-up")


_ENV: dict = {}  # the environment of every measured command (main() sets it)


def _wall(cmd) -> tuple:
    """(wall seconds, CPU seconds of the process and its workers); ``cmd``: one command, or a tuple of commands
    run at the same time."""
    cmds = cmd if isinstance(cmd, tuple) else (cmd,)
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_ENV or None)
             for c in cmds]
    outs = [p.communicate() for p in procs]
    dt = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    for c, p, (out, err) in zip(cmds, procs, outs):
        if p.returncode:
            raise SystemExit(f"{' '.join(c)} failed:\n{out}\n{err}")
    return dt, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def _same_bytes(fc_root: pathlib.Path, np_root: pathlib.Path) -> int:
    """Compare every file of every point; return the number of files compared."""
    n = 0
    for i in range(POINTS):
        for rel in ("input/xGm.bin", "output/golden.bin", "output/golden.mask.bin", "manifest.json"):
            a = (fc_root / "datacopy_sweep_1000" / f"{i:04d}" / rel).read_bytes()
            b = (np_root / f"{i:04d}" / rel).read_bytes()
            if a != b:
                raise SystemExit(f"point {i}: {rel} differs between fastcopy and the numpy script")
            n += 1
    return n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tmp", default=None, help="where to write (default: the system temp folder; /dev/shm takes "
                    "the disk out of the measurement)")
    ap.add_argument("--breakdown", action="store_true", help="also: per-point time of compile / run / write in one "
                    "warm process, next to the numpy loop's")
    ap.add_argument("--no-bytecode", action="store_true", help="run the commands with no bytecode cache (every "
                    "module compiled from source at each start)")
    args = ap.parse_args(argv)
    _prepare(args.no_bytecode)
    runs = {"fastcopy batch --jobs 1": lambda o: _fastcopy_cmd(1, o),
            "fastcopy batch --jobs 2": lambda o: _fastcopy_cmd(2, o),
            "numpy loop (gen_data.py)": _numpy_cmd,
            "numpy loop, simple manifest": lambda o: _numpy_cmd(o, "--simple-manifest"),
            "2 numpy loops at once": lambda o: (_numpy_cmd(o + "a"), _numpy_cmd(o + "b")),
            "fastcopy batch of 1 point": None}
    start = [_wall([sys.executable, "-c", "import fastcopy.golden"])[0] for _ in range(args.repeat)]
    with tempfile.TemporaryDirectory(prefix="fastcopy-bench-case-") as cdir:
        runs["fastcopy batch of 1 point"] = _startup_cmd(_one_point_case(cdir))
        times, cpu, compared = measure(runs, args.repeat, args.tmp)
    base = statistics.median(times["numpy loop (gen_data.py)"])
    print(f"{POINTS} cases from {SWEEP.relative_to(HERE.parent)}, {args.repeat} runs each, wall clock including "
          f"interpreter start, writing to {args.tmp or tempfile.gettempdir()} ({os.cpu_count()} cores, load "
          f"average {os.getloadavg()[0]:.2f}; bytecode cache {'off' if args.no_bytecode else 'on'})")
    print("speed vs numpy: the numpy loop's time / the command's time (above 1: faster than the numpy loop)")
    print(f"{'command':<28} {'median s':>9} {'min s':>7} {'per case':>10} {'speed vs numpy':>15} "
          f"{'CPU s (median)':>15}")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:<28} {med:9.2f} {min(ts):7.2f} {med / POINTS * 1e3:7.2f} ms {base / med:14.2f}x "
              f"{statistics.median(cpu[name]):15.2f}")
    print(f"{'python -c import fastcopy':<28} {statistics.median(start):9.2f}")
    one = statistics.median(times["numpy loop (gen_data.py)"])
    two = statistics.median(times["2 numpy loops at once"])
    j1, j2 = statistics.median(times["fastcopy batch --jobs 1"]), statistics.median(times["fastcopy batch --jobs 2"])
    print(f"two processes on this machine: 2 numpy loops at once do 2x the work in {two / one:.2f}x the time of "
          f"one: {2 * one / two:.2f}x the throughput (the ceiling for --jobs 2); fastcopy --jobs 2 vs --jobs 1: "
          f"{j1 / j2:.2f}x")
    s1 = statistics.median(times["fastcopy batch of 1 point"])
    print(f"start-up (a batch of 1 point): {s1:.2f} s = {s1 / one:.2f}x the numpy loop's whole run; the 1000 points "
          f"of --jobs 1 take {j1 - s1:.2f} s. Best --jobs 2 / --jobs 1 with that start-up and the ceiling: "
          f"(S + W) / (S + W / {2 * one / two:.2f}) = {_bound(j1, s1, 2 * one / two):.2f}x")
    print(f"the 1.6x target: {_needs_for(1.6, s1, 2 * one / two)}")
    calls, files = floor_new_plans(), floor_files(tmp=args.tmp)
    print(f"fastcopy's floor at today's costs (its own start-up and emulated calls, which are this code's costs, "
          f"not the machine's): start-up {s1:.3f} s + the 2000 DataCopy calls alone (new plans) {calls:.3f} s + "
          f"the 4000 files' system calls alone {files:.3f} s = {s1 + calls + files:.3f} s against the numpy loop's "
          f"{one:.3f} s: at most {one / (s1 + calls + files):.2f}x until the start-up or the calls get cheaper")
    print(f"identical bytes (input, golden, mask, manifest): {compared} files compared")
    if args.breakdown:
        breakdown(POINTS, args.repeat, args.tmp)
    return 0


def _prepare(no_bytecode: bool = False) -> None:
    """The measured commands' environment (bytecode cache on unless ``no_bytecode``), its caches filled."""
    from startenv import cold_env, warm_env

    _ENV.clear()
    _ENV.update(cold_env() if no_bytecode else warm_env())
    subprocess.run([sys.executable, "-c", "import fastcopy.golden.batch, fastcopy.cli.batch, fastcopy.cli.progress"],
                   capture_output=True, env=_ENV)  # (untimed: the bytecode cache filled)
    subprocess.run([sys.executable, "-m", "fastcopy", "warmup"], capture_output=True, env=_ENV)  # numba cache


def measure(runs: dict, repeat: int, tmp: str | None) -> tuple:
    """``runs``: name -> (output folder -> command). Each run ``repeat`` times, interleaved, into fresh folders;
    returns (wall seconds per name, CPU seconds per name, files compared between the first ``--jobs 1`` run and the
    first numpy loop: byte-identical or SystemExit)."""
    times = {k: [] for k in runs}
    cpu = {k: [] for k in runs}
    firsts = {}
    with tempfile.TemporaryDirectory(prefix="fastcopy-bench-", dir=tmp) as root:
        for r in range(repeat):
            for name, cmd in runs.items():
                out = os.path.join(root, f"{r}-{len(times[name])}-{abs(hash(name))}")
                wall, used = _wall(cmd(out))
                times[name].append(wall)
                cpu[name].append(used)
                if r == 0 and name in ("fastcopy batch --jobs 1", "numpy loop (gen_data.py)"):
                    firsts[name] = out
                else:
                    for d in (out, out + "a", out + "b"):
                        shutil.rmtree(d, ignore_errors=True)
        compared = _same_bytes(pathlib.Path(firsts["fastcopy batch --jobs 1"]),
                               pathlib.Path(firsts["numpy loop (gen_data.py)"]))
    return times, cpu, compared


def rows(repeat: int = 3) -> list:
    """bench/report.py's rows: ``fastcopy batch`` of the 1000 points, --jobs 1 and 2, against the numpy loop and
    two numpy loops at once (interleaved medians, whole processes, bytecode cache on, /dev/shm where there is one)."""
    _prepare()
    tmp = "/dev/shm" if os.path.isdir("/dev/shm") else None
    runs = {"fastcopy batch --jobs 1": lambda o: _fastcopy_cmd(1, o),
            "fastcopy batch --jobs 2": lambda o: _fastcopy_cmd(2, o),
            "numpy loop (gen_data.py)": _numpy_cmd,
            "2 numpy loops at once": lambda o: (_numpy_cmd(o + "a"), _numpy_cmd(o + "b")),
            "fastcopy batch of 1 point": None}
    with tempfile.TemporaryDirectory(prefix="fastcopy-bench-case-") as cdir:
        runs["fastcopy batch of 1 point"] = _startup_cmd(_one_point_case(cdir))
        times, cpu, _ = measure(runs, repeat, tmp)
    med = {k: statistics.median(v) for k, v in times.items()}
    j1, j2, one, two, s1 = (med[k] for k in runs)
    mcpu = {k: statistics.median(v) for k, v in cpu.items()}
    calls, files = floor_new_plans(), floor_files(tmp=tmp)
    floor = s1 + calls + files  # (a batch with nothing but its start-up, calls and system calls, at today's costs)

    def row(name, value, target="", met=None):
        verdict = "" if met is None else ("met" if met else "NOT met")
        return f"| {name:60} | {value:>18} | {target:>10} | {verdict:>7} |"

    return [row("fastcopy batch, 1000 small cases, --jobs 1 (x numpy loop)", f"{j1:.2f} s {one / j1:.2f}x", ">= 1.0x",
                one / j1 >= 1.0),
            row("fastcopy batch --jobs 2 (x --jobs 1)", f"{j2:.2f} s {j1 / j2:.2f}x", ">= 1.6x", j1 / j2 >= 1.6),
            row("  (numpy loop writing the same files; CPU s)", f"{one:.2f} s, {mcpu[list(runs)[2]]:.2f}"),
            row("  (CPU s of fastcopy --jobs 1 / --jobs 2)", f"{mcpu[list(runs)[0]]:.2f} / {mcpu[list(runs)[1]]:.2f}"),
            row("  (2 numpy loops at once: throughput x one, the ceiling)", f"{2 * one / two:.2f}x"),
            row("  (start-up: fastcopy batch of 1 point; x numpy loop)", f"{s1:.2f} s {s1 / one:.2f}x"),
            row("  (best --jobs 2 x --jobs 1 from start-up + ceiling)", f"{_bound(j1, s1, 2 * one / two):.2f}x"),
            row("  (floor: the points' 2000 DataCopy calls alone, new plans)", f"{calls:.2f} s"),
            row("  (floor: the points' 4000 files, system calls alone)", f"{files:.2f} s"),
            row("  (time left for the points at 1.0x: numpy loop - start-up)", f"{one - s1:.2f} s"),
            row("  (today's floor: start-up + calls + files; x numpy loop)", f"{floor:.2f} s {one / floor:.2f}x")]


def breakdown(points: int = POINTS, repeat: int = 5, tmp: str | None = None) -> None:
    """Per point, in one warm process: compiling the sweep point, running it, writing its folder (fastcopy), next
    to the whole numpy loop per point (the same work and files)."""
    sys.path.insert(0, str(HERE))
    import numpy_gen_data

    from fastcopy.golden import load_case, run_program
    from fastcopy.golden.files import write_point
    from fastcopy.golden.work import small_calls_in_numpy

    with small_calls_in_numpy():  # (the kernels a batch uses)
        _breakdown(points, repeat, tmp, numpy_gen_data, load_case, run_program, write_point)


def _breakdown(points, repeat, tmp, numpy_gen_data, load_case, run_program, write_point) -> None:
    case = load_case(SWEEP)
    progs = [case.point(i) for i in range(points)]
    results = [run_program(p, reuse=True) for p in progs]  # warm: kernels, plans of every point
    rows = {"compile (case.point)": [], "run (run_program, reused TPipe)": [], "write (write_point, as a batch)": [],
            "numpy loop (gen_data.py), whole point": [],
            "whole point, staged (run_chunk)": [],
            "floor: the 2 DataCopy calls alone": [],
            "run, every plan new (as in a batch)": [], "floor, every plan new": []}
    api_only = _api_only(points)
    api_only()
    with tempfile.TemporaryDirectory(prefix="fastcopy-bench-", dir=tmp) as root:
        for r in range(repeat):
            t = time.perf_counter()
            for i in range(points):
                case.point(i)
            rows["compile (case.point)"].append(time.perf_counter() - t)
            [run_program(p, reuse=True) for p in progs]  # (untimed: the plans the last pass's forgetting dropped)
            t = time.perf_counter()
            results = [run_program(p, reuse=True) for p in progs]
            rows["run (run_program, reused TPipe)"].append(time.perf_counter() - t)
            out = os.path.join(root, f"fc{r}")
            os.mkdir(out)
            at = os.path.abspath(out)  # (a batch makes its case folder's absolute path once per chunk)
            t = time.perf_counter()
            for i, res in enumerate(results):
                name = f"{i:04d}"
                write_point(res, os.path.join(out, name), (at, name))
            rows["write (write_point, as a batch)"].append(time.perf_counter() - t)
            from fastcopy.golden.work import run_chunk

            t = time.perf_counter()  # (compile, run and write in groups of config.STAGE_POINTS, as a batch does)
            run_chunk(case, 0, range(points), os.path.join(root, f"ch{r}"))
            rows["whole point, staged (run_chunk)"].append(time.perf_counter() - t)
            shutil.rmtree(os.path.join(root, f"ch{r}"))
            npout = os.path.join(root, f"np{r}")
            t = time.perf_counter()
            numpy_gen_data.main(["-o", npout])
            rows["numpy loop (gen_data.py), whole point"].append(time.perf_counter() - t)
            t = time.perf_counter()
            api_only()
            rows["floor: the 2 DataCopy calls alone"].append(time.perf_counter() - t)
            _forget_plans()
            t = time.perf_counter()
            [run_program(p, reuse=True) for p in progs]
            rows["run, every plan new (as in a batch)"].append(time.perf_counter() - t)
            _forget_plans()
            t = time.perf_counter()
            api_only()
            rows["floor, every plan new"].append(time.perf_counter() - t)
            shutil.rmtree(out)
            shutil.rmtree(npout)
    print(f"per point, median of {repeat} passes over {points} points (one warm process, plans cached unless "
          f"said, load average {os.getloadavg()[0]:.2f})")
    for name, ts in rows.items():
        print(f"  {name:<40} {statistics.median(ts) / points * 1e3:7.3f} ms")


def _api_only(points: int = POINTS):
    """What any fastcopy batch of this sweep must do per point, as a function over the points: the two DataCopy
    calls through the public API on a restarted pipe (tensors made; no case, no input generation, no files)."""
    import numpy as np

    import fastcopy as fc

    pipe = fc.TPipe(product="ATLAS_A2")
    values = range(1, 11), range(1, 11), range(0, 10)  # (the sweep's axes, last fastest)
    sizes = [(bc, bl, gap) for bc in values[0] for bl in values[1] for gap in values[2]][:points]

    def api_only():
        for bc, bl, gap in sizes:
            pipe.restart()
            x = fc.GlobalTensor(np.zeros(bc * (bl + gap) * 16, np.float16))
            y = fc.GlobalTensor(np.zeros(bc * bl * 16, np.float16))
            u = pipe.alloc("VECIN", np.float16, bc * bl * 16)
            fc.DataCopy(u, x, fc.DataCopyParams(bc, bl, gap, 0))
            fc.DataCopy(y, u, bc * bl * 16)

    return api_only


def floor_new_plans(repeat: int = 3) -> float:
    """Seconds for the 1000 points' DataCopy calls alone, every plan new, on the numpy kernels (as in a batch):
    the least any batch of this sweep spends running its points (median of ``repeat``)."""
    from fastcopy.golden.work import small_calls_in_numpy

    api_only = _api_only()
    times = []
    with small_calls_in_numpy():
        api_only()
        for _ in range(repeat):
            _forget_plans()
            t = time.perf_counter()
            api_only()
            times.append(time.perf_counter() - t)
    return statistics.median(times)


def floor_files(repeat: int = 3, tmp: str | None = None) -> float:
    """Seconds for the system calls alone of writing the sweep's 1000 point folders as the batch does (a hidden
    folder made, its two sub-folders, four files of the points' sizes opened, written and closed, one rename):
    no path handling beyond an f-string, no hashing, no manifest built (median of ``repeat``)."""
    sizes = []
    for bc in range(1, 11):
        for bl in range(1, 11):
            for gap in range(10):
                n, m = bc * (bl + gap) * 16, bc * bl * 16
                sizes.append((bytes(2 * n), bytes(2 * m), bytes(m), bytes(1400)))  # (manifests: 1.3-1.4 KB)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    names = ("input/xGm.bin", "output/golden.bin", "output/golden.mask.bin", "manifest.json")
    times = []
    with tempfile.TemporaryDirectory(prefix="fastcopy-bench-", dir=tmp) as root:
        for r in range(repeat):
            out = os.path.join(root, str(r))
            os.mkdir(out)
            t = time.perf_counter()
            for i, data in enumerate(sizes):
                new = f"{out}/.{i:04d}.new"
                os.mkdir(new)
                os.mkdir(new + "/input")
                os.mkdir(new + "/output")
                for name, b in zip(names, data):
                    fd = os.open(f"{new}/{name}", flags, 0o666)
                    os.write(fd, b)
                    os.close(fd)
                os.rename(new, f"{out}/{i:04d}")
            times.append(time.perf_counter() - t)
            shutil.rmtree(out)
    return statistics.median(times)


def _forget_plans() -> None:
    """Empty DataCopy's plan caches (a batch's points are new parameters: every call plans)."""
    from fastcopy.ops import datacopy

    for f in vars(datacopy).values():
        if hasattr(f, "cache_clear"):
            f.cache_clear()


# ------------------------------------------------------------------------------------------- pytest-benchmark
@pytest.fixture
def out_dir():
    d = tempfile.mkdtemp(prefix="fastcopy-bench-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _fresh(root: str) -> str:
    _fresh.n = getattr(_fresh, "n", 0) + 1
    return os.path.join(root, str(_fresh.n))


def test_batch_1000_in_process(benchmark, out_dir):
    from fastcopy.golden.batch import run_batch

    assert run_batch([str(SWEEP)], _fresh(out_dir), jobs=1).ok  # warm-up: kernels, plans
    benchmark.group = "batch-1000"
    benchmark.extra_info["cases"] = POINTS
    benchmark.extra_info["bytes"] = sum(bc * bl * 16 * 2 for bc in range(1, 11) for bl in range(1, 11)) * 10
    rep = benchmark.pedantic(lambda: run_batch([str(SWEEP)], _fresh(out_dir), jobs=1), rounds=3, iterations=1)
    assert rep.ok


def test_numpy_loop_1000_in_process(benchmark, out_dir):
    sys.path.insert(0, str(HERE))
    import numpy_gen_data

    numpy_gen_data.main(["-o", _fresh(out_dir)])
    benchmark.group = "batch-1000"
    benchmark.extra_info["cases"] = POINTS
    benchmark.pedantic(lambda: numpy_gen_data.main(["-o", _fresh(out_dir)]), rounds=3, iterations=1)


if __name__ == "__main__":
    raise SystemExit(main())
