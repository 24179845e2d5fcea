"""The matmul example kernels against independent numpy computations, and the magnitude-scaled bound."""

import importlib.util
import pathlib

import numpy as np
import pytest

from fastcopy.cube.bound import check_mmad, conversion_allowance, devkit_close, mmad_tolerance

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("product", ["ATLAS_A2", "ATLAS_A3"])
def test_half_matmul_relu_kernel(product):
    mod = _load("matmul_kernel")
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (mod.M, mod.K)).astype(np.float16)
    b = rng.uniform(-1, 1, (mod.K, mod.N)).astype(np.float16)
    c = mod.matmul_relu(a, b, product)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    ref = np.maximum(exact, 0)
    tol = mmad_tolerance(a, b, 16) + conversion_allowance(ref, np.float16)
    verdict = check_mmad(c, ref, tol)
    assert verdict.ok, verdict
    assert (c >= 0).all()


def test_int8_requant_kernel():
    mod = _load("matmul_int8_kernel")
    rng = np.random.default_rng(2)
    a = rng.integers(-128, 128, (mod.M, mod.K)).astype(np.int8)
    b = rng.integers(-128, 128, (mod.K, mod.N)).astype(np.int8)
    c = mod.matmul_req8(a, b, 1 / 256, -3)
    acc = a.astype(np.int64) @ b.astype(np.int64)  # exact
    ref = np.clip(np.rint(np.clip(acc / 256, -256, 255)) - 3, -128, 127)
    verdict = check_mmad(c, ref, conversion_allowance(ref, np.int8))
    assert verdict.ok, verdict
    assert np.array_equal(c, ref.astype(np.int8))  # 1/256 is exact in the (1, 8, 10) scale: bit-exact here


def test_bound_accepts_reordered_sums_and_rejects_wrong_ones():
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (64, 512)).astype(np.float16).astype(np.float64)
    b = rng.uniform(-1, 1, (512, 64)).astype(np.float16).astype(np.float64)
    exact = a @ b
    f32_chunks = np.zeros_like(exact, dtype=np.float32)  # a float32 accumulation in 16-wide chunks
    for s in range(0, 512, 16):
        f32_chunks = (f32_chunks + (a[:, s:s + 16] @ b[s:s + 16]).astype(np.float32)).astype(np.float32)
    tol = mmad_tolerance(a, b, 16)
    assert check_mmad(f32_chunks, exact.astype(np.float32), tol).ok
    wrong = exact.astype(np.float32).copy()
    wrong[5, 7] += np.float32(1e-2)
    verdict = check_mmad(wrong, exact.astype(np.float32), tol)
    assert not verdict.ok and verdict.failures == 1 and verdict.worst_index == (5, 7)


def test_devkit_check_fails_on_cancellation_where_the_bound_passes():
    rng = np.random.default_rng(4)
    a = rng.uniform(-1, 1, (128, 512)).astype(np.float16).astype(np.float64)
    b = rng.uniform(-1, 1, (512, 128)).astype(np.float16).astype(np.float64)
    ref = (a @ b).astype(np.float32)
    numpy_f32 = a.astype(np.float32) @ b.astype(np.float32)
    assert check_mmad(numpy_f32, ref, mmad_tolerance(a, b, 16)).ok
    assert not devkit_close(numpy_f32, ref)


def test_k_loop_bound_adds_per_call():
    a = np.ones((16, 64))
    b = np.ones((64, 16))
    one = mmad_tolerance(a, b, 16)
    two = mmad_tolerance(a, b, 16, k_chunks=[32, 32])
    assert (two > one).all()
    with pytest.raises(ValueError, match="do not add up"):
        mmad_tolerance(a, b, 16, k_chunks=[32])


def test_bound_as_a_named_compare_rule(tmp_path):
    """The bound plugged into the golden comparison: a correct but reordered result passes, a wrong one fails."""
    from fastcopy.cube.bound import register_mmad_rule
    from fastcopy.golden.verify import compare

    rng = np.random.default_rng(6)
    a = rng.uniform(-1, 1, (32, 256)).astype(np.float16)
    b = rng.uniform(-1, 1, (256, 16)).astype(np.float16)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    golden = exact.astype(np.float32)
    reordered = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float32)
    name = register_mmad_rule("mm_test", a, b, 16)
    assert compare(reordered, golden, np.float32, rule=name).ok
    wrong = golden.copy()
    wrong[3, 4] += 0.01
    bad = compare(wrong, golden, np.float32, rule=name)
    assert not bad.ok and bad.mismatches == 1
