"""gen_data.py of the Add sample, written with fastcopy's Python API (the same program as vector_add.toml).

    python examples/gen_data_vector_add.py OUT_DIR

CopyIn with DataCopy, compute in numpy on the tensors, CopyOut with DataCopy, then write_golden: OUT_DIR gets
input/x.bin, input/y.bin, output/golden.bin (+ golden.mask.bin) and manifest.json, like a case file run.
"""

import sys

import numpy as np

from fastcopy import DataCopy, GlobalTensor, TPipe, TPosition
from fastcopy.golden import write_golden

TOTAL_LENGTH, USE_CORE_NUM = 8 * 2048, 8
BLOCK_LENGTH = TOTAL_LENGTH // USE_CORE_NUM
TILE_NUM, BUFFER_NUM = 8, 2
TILE_LENGTH = BLOCK_LENGTH // TILE_NUM // BUFFER_NUM  # 128


def main(out_dir: str) -> dict:
    rng = np.random.default_rng(7)
    x = rng.uniform(-10, 10, TOTAL_LENGTH).astype(np.float16)
    y = rng.uniform(-10, 10, TOTAL_LENGTH).astype(np.float16)
    x_gm, y_gm = GlobalTensor(x), GlobalTensor(y)
    z_gm = GlobalTensor(np.zeros(TOTAL_LENGTH, np.float16), defined=False)  # an output: nothing defined yet
    for block_idx in range(USE_CORE_NUM):  # cores run one after another; each has its own TPipe
        pipe = TPipe(product="ATLAS_A2")
        x_local = pipe.alloc(TPosition.VECIN, "half", TILE_LENGTH)
        y_local = pipe.alloc(TPosition.VECIN, "half", TILE_LENGTH)
        z_local = pipe.alloc(TPosition.VECOUT, "half", TILE_LENGTH)
        base = block_idx * BLOCK_LENGTH
        for i in range(TILE_NUM * BUFFER_NUM):
            DataCopy(x_local, x_gm[base + i * TILE_LENGTH], TILE_LENGTH)  # CopyIn
            DataCopy(y_local, y_gm[base + i * TILE_LENGTH], TILE_LENGTH)
            z_local[...] = x_local.numpy() + y_local.numpy()  # Compute: writing with [...] marks it defined
            DataCopy(z_gm[base + i * TILE_LENGTH], z_local, TILE_LENGTH)  # CopyOut
    return write_golden(out_dir, inputs={"x": x, "y": y}, outputs={"z": z_gm}, product="ATLAS_A2", seed=7,
                        name="vector_add", ops=[{"api": "DataCopy", "params": {"count": TILE_LENGTH}}])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "out/vector_add_py")
