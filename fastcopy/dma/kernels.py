"""Where the runner's kernels come from: the numba kernels of :mod:`fastcopy.kernels`, imported on the first
call that needs them (``import fastcopy`` does not load numba). Each name below is a stand-in that loads the
kernels and replaces every stand-in with the real kernel, so later calls go straight to numba."""

from __future__ import annotations

KERNELS = ("copy_strided", "fill_strided", "all_set")


def load() -> None:
    """Import (compile or load from the on-disk cache) the numba kernels and bind them here."""
    from .. import kernels

    g = globals()
    for name in KERNELS:
        g[name] = getattr(kernels, name)


def loaded() -> bool:
    return globals()["copy_strided"] is not _copy_strided


def _copy_strided(dst, dbase, src, sbase, meta):
    load()
    return copy_strided(dst, dbase, src, sbase, meta)


def _fill_strided(dst, dbase, meta, value):
    load()
    return fill_strided(dst, dbase, meta, value)


def _all_set(src, sbase, meta, value):
    load()
    return all_set(src, sbase, meta, value)


copy_strided, fill_strided, all_set = _copy_strided, _fill_strided, _all_set
