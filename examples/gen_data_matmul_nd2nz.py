"""gen_data.py of a matmul-style kernel, written with fastcopy's Python API (the program of matmul_nd2nz.toml).

    python examples/gen_data_matmul_nd2nz.py OUT_DIR

Per core: its 32-row block of A and all of B to L1 in the NZ layout (DataCopy with Nd2NzParams), the NZ tiles
copied out for checking, and C = A @ B computed in numpy (float32); then write_golden.
"""

import sys

import numpy as np

from fastcopy import DataCopy, GlobalTensor, Nd2NzParams, TPipe, TPosition
from fastcopy.golden import write_golden

M, K, N, CORES = 64, 64, 32, 2
MB = M // CORES  # rows of A per core


def main(out_dir: str) -> dict:
    rng = np.random.default_rng(5)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    a_gm, b_gm = GlobalTensor(a), GlobalTensor(b)
    a_nz = GlobalTensor(np.zeros((CORES, K // 16, MB, 16), np.float16), defined=False)
    b_nz = GlobalTensor(np.zeros((N // 16, K, 16), np.float16), defined=False)
    c_gm = GlobalTensor(np.zeros((M, N), np.float32), defined=False)
    for block_idx in range(CORES):
        pipe = TPipe(product="ATLAS_A2")
        a1 = pipe.alloc(TPosition.A1, "half", MB * K)
        b1 = pipe.alloc(TPosition.B1, "half", K * N)
        c_local = pipe.alloc(TPosition.VECOUT, "float", MB * N)
        # Nd2NzParams(ndNum, nValue, dValue, srcNdMatrixStride, srcDValue, dstNzC0Stride, dstNzNStride,
        #             dstNzMatrixStride)
        DataCopy(a1, a_gm[block_idx * MB * K], Nd2NzParams(1, MB, K, 0, K, MB, 1, 0))
        DataCopy(b1, b_gm, Nd2NzParams(1, K, N, 0, N, K, 1, 0))
        DataCopy(a_nz[block_idx * MB * K], a1, MB * K)
        DataCopy(b_nz, b1, K * N)
        rows = a[block_idx * MB:(block_idx + 1) * MB].astype(np.float32)
        c_local[...] = (rows @ b.astype(np.float32)).reshape(-1)  # the compute step (Mmad's result)
        DataCopy(c_gm[block_idx * MB * N], c_local, MB * N)
    return write_golden(out_dir, inputs={"a": a, "b": b}, outputs={"aNz": a_nz, "bNz": b_nz, "c": c_gm},
                        product="ATLAS_A2", seed=5, name="matmul_nd2nz")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "out/matmul_nd2nz_py")
