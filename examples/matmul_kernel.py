"""A whole matmul kernel on Atlas A2, transcribed: C = ReLU(A x B) in half.

GM (ND) -> L1 (NZ, DataCopy with Nd2NzParams) -> L0A / L0B (LoadData 2D; B transposed per fractal into Zn)
-> Mmad (float accumulation in L0C) -> Fixpipe NZ2ND with F322F16 and ReLU -> GM (ND).

Run it: ``python examples/matmul_kernel.py`` (prints the check against numpy under the magnitude-scaled bound).
"""

import numpy as np

import fastcopy as fc
from fastcopy import TPosition as Pos

M, K, N = 64, 96, 80


def matmul_relu(a: np.ndarray, b: np.ndarray, product: str = "ATLAS_A2") -> np.ndarray:
    """``relu(a @ b)`` as half, computed by the emulated kernel (``a``: M x K half, ``b``: K x N half)."""
    m, k = a.shape
    _, n = b.shape
    m1, k1, n1 = -(-m // 16), -(-k // 16), -(-n // 16)
    pipe = fc.TPipe(product)
    out = np.zeros((m, n), np.float16)
    gm_a, gm_b, gm_c = fc.GlobalTensor(a), fc.GlobalTensor(b), fc.GlobalTensor(out)

    # GM -> L1: ND -> NZ (fractal columns of 16 x 16, rows padded to 16)
    l1_a = pipe.alloc(Pos.A1, "half", m1 * k1 * 256)
    l1_b = pipe.alloc(Pos.B1, "half", k1 * n1 * 256)
    fc.DataCopy(l1_a, gm_a, fc.nd2nz_params(m, k, "half"))
    fc.DataCopy(l1_b, gm_b, fc.nd2nz_params(k, n, "half"))

    # L1 -> L0A (Zz): fractal row i of A is fractals i, i+M1, i+2*M1, ... of the NZ image
    l0a = pipe.alloc(Pos.A2, "half", m1 * k1 * 256)
    for i in range(m1):
        fc.LoadData(l0a[i * k1 * 256], l1_a, fc.LoadData2DParams(startIndex=i, repeatTimes=k1, srcStride=m1))
    # L1 -> L0B (Zn): fractal row p of B, each fractal transposed
    l0b = pipe.alloc(Pos.B2, "half", k1 * n1 * 256)
    for p in range(k1):
        fc.LoadData(l0b[p * n1 * 256], l1_b, fc.LoadData2DParams(startIndex=p, repeatTimes=n1, srcStride=k1,
                                                                 ifTranspose=True))

    # L0A x L0B -> L0C (float)
    l0c = pipe.alloc(Pos.CO1, "float", m1 * n1 * 256)
    fc.Mmad(l0c, l0a, l0b, fc.MmadParams(m, n, k))

    # L0C -> GM: NZ2ND, float -> half, ReLU
    fc.Fixpipe(gm_c, l0c, fc.FixpipeParamsV220(nSize=n, mSize=m, srcStride=16 * m1, dstStride=n, reluEn=True,
                                               quantPre="F322F16", deqScalar=0))
    return out


if __name__ == "__main__":
    from fastcopy.cube.bound import check_mmad, conversion_allowance, mmad_tolerance

    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = matmul_relu(a, b)
    ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64), 0)
    tol = mmad_tolerance(a, b, 16) + conversion_allowance(ref, np.float16)
    print(check_mmad(c, ref, tol))
