"""Golden-data generation: declarative case files -> ``input/*.bin``, ``output/golden.bin`` (+ definedness mask)
and ``manifest.json``, in the layout of the Ascend C examples.

    case = load_case("examples/pad_row_copy.toml")       # TOML or JSON; sweeps expand into len(case) points
    result = run_program(case.point(0))                  # the public fastcopy API, op by op
    write_result(result, "out/")                         # the files

A program written directly with the tensor API writes the same layout with :func:`write_golden`. Many case files
at once: :func:`run_batch` (local worker processes, or a Dask cluster with ``client=``).
"""

from ..lazy import paused_collector as _paused_collector
from ..precompiled import precompiled as _precompiled

# (the modules' objects are made with the cyclic collector paused: lazy.paused_collector; their dataclasses' methods
# come precompiled: fastcopy.precompiled)
with _paused_collector():
    from ._methods import TABLE as _METHODS

    with _precompiled(_METHODS):
        from .batch import BatchReport, run_batch
        from .case import Case, case_from_dict, load_case, load_case_text
        from .engine import CaseRunError, Result, run_program
        from .files import write_golden, write_result
        from .schema import APIS, DEFAULT_SEED, CaseError, Program

__all__ = ["Case", "case_from_dict", "load_case", "load_case_text", "CaseRunError", "Result", "run_program",
           "write_golden", "write_result", "APIS", "DEFAULT_SEED", "CaseError", "Program", "run_case", "run_batch",
           "BatchReport"]


def run_case(path_or_case, directory: str, index: int | None = None, seed: int | None = None) -> list:
    """Run every point of a case (or point ``index``) and write it: ``directory`` for a case without sweeps,
    ``directory/NNNN`` per point for a sweep. Returns the manifests."""
    import os

    case = path_or_case if isinstance(path_or_case, Case) else load_case(path_or_case, seed=seed)
    indices = range(len(case)) if index is None else [index]
    width = max(4, len(str(len(case) - 1)))
    out = []
    for i in indices:
        prog = case.point(i)
        where = os.path.join(directory, f"{i:0{width}d}") if case.is_sweep else directory
        out.append(write_result(run_program(prog), where))
    return out
