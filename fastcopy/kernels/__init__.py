"""Numba kernels only. They never validate: every call comes from an executed plan whose byte spans were
checked against the tensors (``boundscheck`` is off). Arrays are flat unsigned views of one width."""

from .layout import copy_dense, copy_rows, fill_dense, transpose_blocks
from .strided import all_set, copy_strided, fill_strided

__all__ = ["copy_strided", "fill_strided", "all_set", "transpose_blocks", "copy_dense", "copy_rows", "fill_dense"]
