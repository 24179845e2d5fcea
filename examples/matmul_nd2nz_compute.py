"""The compute step of matmul_nd2nz.toml: this core's 32 x 32 block of C = A @ B, accumulated in float32.

Arguments are the tensors the case lists (read with ``.numpy()``, write with ``tensor[...] = values``, which marks
them defined); ``block_idx`` (like loop variables and sweep values) is passed when the function asks for it.
"""

import numpy as np


def matmul(a, b, c, block_idx):
    rows = a.numpy()[block_idx * 32:(block_idx + 1) * 32].astype(np.float32)
    c[...] = (rows @ b.numpy().astype(np.float32)).reshape(-1)
