"""Numba kernels only. They never validate: every call comes from an executed plan whose byte spans were
checked against the tensors (``boundscheck`` is off). Arrays are flat unsigned views of one width."""

from .cache import ensure_cache

ensure_cache()  # before any kernel module: works without a writable numba cache

from .elements import transpose_elements  # noqa: E402
from .layout import copy_dense, copy_rows, fill_dense, transpose_blocks  # noqa: E402
from .strided import all_set, copy_strided, fill_strided, run_steps  # noqa: E402
from .tailed import copy_tailed  # noqa: E402

__all__ = ["copy_strided", "fill_strided", "all_set", "transpose_blocks", "copy_dense", "copy_rows", "fill_dense",
           "transpose_elements", "run_steps", "copy_tailed"]
