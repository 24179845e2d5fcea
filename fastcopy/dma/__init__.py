"""The DMA pipeline every op runs on (see docs/architecture.md)::

    ops/* planners --(steps.Move/Fill/Convert)--> lower.make_plan --(Plan: checked spans, kernel steps)-->
    run.execute --(abi meta arrays)--> fastcopy.kernels (numba) or the numpy path

- :mod:`.steps`: the step IR (what a call writes, in bytes), spans, the overlap analysis.
- :mod:`.lower`: plan construction: span checks, lowering of steps to kernel steps (views, tiling, threads).
- :mod:`.abi`: the kernel argument layout (``meta``), its only owner.
- :mod:`.run`: executes a plan on tensors (the only place that writes memory).
- :mod:`.kernels`: where the kernels come from (loaded on first use).

Nothing here imports the ops or the public API (no upward imports).
"""
