"""Where the first call of new parameters spends its time, per op family (the issue-11 "<= 30 us" rows).

For each family of bench/report.py's overhead rows: the whole call (never-seen parameters), and its parts measured
inside the same calls: planning (validation and steps, without lowering), ``make_plan`` (span checks, lowering,
kernel arguments), ``execute``; then the plan's size (plan steps, kernel steps) and what one plan step costs to
lower. The bare costs below the table are the floor a kernel step cannot go under in Python: building one Move
step, lowering it (``lower_small``), one numba kernel dispatch, one ``meta`` array.

    python bench/plan_floor.py
    python bench/plan_floor.py --cpu   # this thread's CPU time instead of wall time (a shared, busy machine:
                                       # other processes' time is left out; each timer read costs ~0.5 us)
    python bench/plan_floor.py --rows [--cpu] [family ...]   # the report's overhead rows alone, its method
"""

from __future__ import annotations

import pathlib
import sys
import time

#: the clock (``--cpu``: this thread's CPU time)
clock = time.perf_counter

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def bench_buffers(pipe) -> dict:
    """The tensors the new-parameter calls use (destinations move along them per pass)."""
    import numpy as np

    from fastcopy import GlobalTensor, TPosition

    vo = pipe.alloc(TPosition.VECOUT, "half", 8192)
    vo.numpy()[:] = 0
    vo.set_defined()
    return {"big": GlobalTensor(np.zeros(1 << 16, np.float16)), "ub": pipe.alloc(TPosition.VECIN, "half", 8192),
            "l1": pipe.alloc(TPosition.A1, "half", 1 << 16), "vo": vo, "product": pipe.product}


def new_param_calls(cache: dict, r: int, k: int = 200) -> dict:
    """Per op family: (function, k+1 argument tuples of never-seen parameters), on destinations at element 16*r
    of the buffers of :func:`bench_buffers` (so that each pass ``r`` plans anew)."""
    import numpy as np

    import fastcopy as fc
    from fastcopy import (DataCopy, DataCopyExtParams, DataCopyPad, DataCopyPadExtParams, DataCopyParams,
                          GlobalTensor)
    from fastcopy.formats import nz_shape

    big, ub, l1 = (cache[n][16 * r] for n in ("big", "ub", "l1"))
    src = cache["big"]
    dev = cache["vo"]  # (a defined source: the whole buffer; destinations move per pass)
    g1 = range(1, k + 2)
    fams = {
        "DataCopy(count)": (DataCopy, [(ub, src, 16 * g) for g in g1]),
        "DataCopy(DataCopyParams)": (DataCopy, [(ub, src, DataCopyParams(1, g)) for g in g1]),
        "DataCopy(Nd2NzParams)": (DataCopy, [(l1, src, fc.nd2nz_params(16, 15 + g, "half")) for g in g1]),
        "DataCopy(Nz2NdParamsFull)": (DataCopy, [(big, dev, fc.nz2nd_params(g, 16, "half")) for g in g1]),
        "Nz2NdParamsFull, 2 fractals": (DataCopy, [(big, dev, fc.nz2nd_params(g, 32, "half"))
                                                   for g in g1]),
        "DataCopyPad": (DataCopyPad, [(ub, src, DataCopyExtParams(1, 2 * g, 0, 0, 0),
                                       DataCopyPadExtParams(False, 0, 0, 0)) for g in g1]),
        "DataCopyPad UB->GM": (DataCopyPad, [(big, dev, DataCopyExtParams(1, 2 * g, 0, 0, 0)) for g in g1]),
        "to_nz (new shape)": (fc.to_nz, [(np.zeros((15 + r, 15 + g), np.float16),) for g in g1]),
        "from_nz (new shape)": (fc.from_nz, [(np.zeros(nz_shape((15 + r, 15 + g), np.float16), np.float16),
                                              (15 + r, 15 + g)) for g in g1]),
    }
    slices = []
    for g in g1:
        d_info, s_info = fc.slice_infos((8, 240 + 16 * g), np.s_[:, 16:32], "half", product=cache["product"])
        slices.append((ub, GlobalTensor(np.zeros(8 * (240 + 16 * g), np.float16)), d_info, s_info, len(s_info)))
    fams["DataCopy(SliceInfo)"] = (DataCopy, slices)
    return fams


#: the passes of :func:`rows` (destinations at element 16*r): not the passes bench/report.py times its overhead
#: rows with (1-4) before it calls :func:`rows` in the same process: their plans are in the plan caches, so a
#: "new parameter" call there measured a cached one (the report's 8 us "whole" ND2NZ row against its 51 us
#: overhead row, both new-parameter calls)
PASSES = range(11, 16)


def _best(fn, n: int = 3000, repeat: int = 7) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = clock()
        for _ in range(n):
            fn()
        best = min(best, (clock() - t0) / n)
    return best


def rows() -> list[str]:
    import fastcopy.api as api_mod
    import fastcopy.formats as formats_mod
    import fastcopy.ops.datacopy as dc_mod
    import fastcopy.ops.nz as nz_mod
    import fastcopy.ops.pad as pad_mod
    import fastcopy.ops.slice as slice_mod
    from fastcopy import TPipe
    from fastcopy.cli.warmup import warmup
    from fastcopy.dma import abi, lower
    from fastcopy.dma import kernels as K
    from fastcopy.dma.steps import Move

    K.load()
    warmup()
    acc = {"make_plan": 0.0, "execute": 0.0, "steps": 0, "ksteps": 0, "plans": 0}
    make_plan, execute, run_raw = lower.make_plan, api_mod.execute, api_mod.run_raw
    make_tailed_plan = lower.make_tailed_plan

    single_burst, tailed_rows = lower.single_burst, lower.tailed_rows

    def timed(build):  # (make_plan, make_tailed_plan, and the direct builders planners call themselves: a new
        def call(*a, **k):  # DataCopyParams / NZ2ND call's single_burst, a new ND2NZ / DataCopyPad's tailed_rows)
            t0 = clock()
            plan = build(*a, **k)
            acc["make_plan"] += clock() - t0
            if plan is not None:  # (a direct builder that declined: make_plan follows, and counts the plan)
                acc["steps"] += len(plan.steps)
                acc["ksteps"] += len(plan.ksteps)
                acc["plans"] += 1
            return plan

        return call

    timed_make_plan, timed_make_tailed_plan = timed(make_plan), timed(make_tailed_plan)
    timed_single_burst, timed_tailed_rows = timed(single_burst), timed(tailed_rows)

    def timed_execute(*a, **k):
        t0 = clock()
        execute(*a, **k)
        acc["execute"] += clock() - t0

    def timed_run_raw(*a, **k):  # (to_nz / from_nz run small plans on the arrays' bytes)
        t0 = clock()
        done = run_raw(*a, **k)
        acc["execute"] += clock() - t0
        return done

    mods = (dc_mod, nz_mod, pad_mod, slice_mod, formats_mod)
    for m in mods:
        m.make_plan = timed_make_plan
    nz_mod.make_tailed_plan = pad_mod.make_tailed_plan = timed_make_tailed_plan
    dc_mod.single_burst = nz_mod.single_burst = timed_single_burst
    nz_mod.tailed_rows = pad_mod.tailed_rows = timed_tailed_rows
    api_mod.execute, api_mod.run_raw = timed_execute, timed_run_raw
    out = [f"| {'first call of new parameters':30} | {'whole':>8} | {'planning':>8} | {'make_plan':>9} | "
           f"{'execute':>8} | {'steps':>5} | {'kernel steps':>12} | {'per step':>8} |",
           f"|{'-' * 32}|{'-' * 10}|{'-' * 10}|{'-' * 11}|{'-' * 10}|{'-' * 7}|{'-' * 14}|{'-' * 10}|"]
    try:
        bufs = bench_buffers(TPipe(product="ATLAS_A2"))
        runs = {}
        for r in PASSES:
            for name, (fn, calls) in new_param_calls(bufs, r).items():
                fn(*calls[0])
                acc.update(make_plan=0.0, execute=0.0, steps=0, ksteps=0, plans=0)
                t0 = clock()
                for args in calls[1:]:
                    fn(*args)
                whole = clock() - t0
                n = len(calls) - 1
                runs.setdefault(name, []).append((whole / n, acc["make_plan"] / n, acc["execute"] / n,
                                                  acc["steps"] / max(acc["plans"], 1),
                                                  acc["ksteps"] / max(acc["plans"], 1)))
    finally:
        for m in mods:
            m.make_plan = make_plan
        nz_mod.make_tailed_plan = pad_mod.make_tailed_plan = make_tailed_plan
        dc_mod.single_burst = nz_mod.single_burst = single_burst
        nz_mod.tailed_rows = pad_mod.tailed_rows = tailed_rows
        api_mod.execute, api_mod.run_raw = execute, run_raw
    for name, vals in runs.items():
        w, mp, ex, st, ks = (float(v) for v in np.median(np.array(vals), axis=0))
        out.append(f"| {name:30} | {w * 1e6:6.1f}us | {(w - mp - ex) * 1e6:6.1f}us | {mp * 1e6:7.1f}us | "
                   f"{ex * 1e6:6.1f}us | {st:5.1f} | {ks:12.1f} | {mp / max(st, 1) * 1e6:6.1f}us |")
    # the floor of one kernel step in Python
    a = np.zeros(4096, np.uint16)
    meta = abi.pack(16, ((1, 0, 0), (1, 0, 0), (2, 16, 512), (16, 40, 16)), (0, 1, 0, 2), (0,), (0,))
    step = Move((0,), (0,), 32, ((16, 80, 32), (2, 32, 512)))
    bare = [("sum(range(1000)), for scale", lambda: sum(range(1000))),
            ("one Move step built", lambda: Move((0,), (0,), 32, ((16, 80, 32), (2, 32, 512)))),
            ("one step lowered (lower_small, meta included)", lambda: lower.lower_small(step, 16, 0)),
            ("one meta array (abi.pack)", lambda: abi.pack(16, abi.NO_LOOPS, (0, 1, 0, 1), (0,), (0,))),
            ("one numba kernel call (copy_strided, 1 KiB)", lambda: K.copy_strided(a, 0, a, 2048, meta))]
    out += ["", f"| {'the floor, per kernel step (bare, best of 7)':50} | {'time':>8} |", f"|{'-' * 52}|{'-' * 10}|"]
    for label, fn in bare:
        out.append(f"| {label:50} | {_best(fn) * 1e6:6.2f}us |")
    return out


def report_rows(names=()) -> list[str]:
    """The report's "first call of new parameters" rows alone (bench/report.py ``call_overhead``'s method: kernels
    loaded and warmed up, five passes of 200 never-seen parameter sets, the median), per family (``names``: only
    those), timed with :data:`clock`."""
    from fastcopy import DataCopy, DataCopyParams, GlobalTensor, TPipe, TPosition
    from fastcopy.cli.warmup import warmup
    from fastcopy.dma import kernels

    kernels.load()
    pipe = TPipe(product="ATLAS_A2")
    ub = pipe.alloc(TPosition.VECIN, "half", 8192)
    DataCopy(ub, GlobalTensor(np.zeros(512, np.float16)), DataCopyParams(1, 32))  # (as the report, before its rows)
    warmup()
    bufs = bench_buffers(pipe)
    passes = [new_param_calls(bufs, r) for r in (1, 2, 3, 5, 6)]
    out = []
    for name in passes[0]:
        if names and name not in names:
            continue
        times = []
        for fams in passes:
            fn, calls = fams[name]
            fn(*calls[0])
            t0 = clock()
            for args in calls[1:]:
                fn(*args)
            times.append((clock() - t0) / (len(calls) - 1))
        out.append(f"| first call of new parameters: {name:30} | {float(np.median(times)) * 1e6:6.1f} us |")
    return out


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--cpu" in args:
        clock = time.thread_time
    if "--rows" in args:  # python bench/plan_floor.py --rows [--cpu] [family ...]
        print(*report_rows([a for a in args if not a.startswith("--")]), sep="\n")
    else:
        print(*rows(), sep="\n")
