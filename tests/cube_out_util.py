"""Helpers of the cube-out tests: the worked vectors and operand placement."""

import json
import pathlib

import ml_dtypes
import numpy as np

from fastcopy import Product, TPipe, TPosition
from fastcopy.cube import fractal

VECTORS = json.loads((pathlib.Path(__file__).parent / "data" / "cube_out_vectors.json").read_text())["vectors"]
DT = {"float16": np.float16, "float32": np.float32, "int8": np.int8, "uint8": np.uint8, "int32": np.int32,
      "bfloat16": ml_dtypes.bfloat16, "uint64": np.uint64}


def vector(name):
    return next(v for v in VECTORS if v["name"] == name)


def for_product(obj, product):
    """Merge a vector part with its ``by_product`` entry for ``product`` (keys like "A2|A3")."""
    if not isinstance(obj, dict):
        return obj
    out = {k: v for k, v in obj.items() if k != "by_product"}
    for keys, part in obj.get("by_product", {}).items():
        if product.key in keys.split("|"):
            out.update(part)
    return out


def array(spec):
    dt = np.dtype(DT[spec["dtype"]])
    if "bits" in spec and "values" not in spec:
        width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
        return np.array([int(h, 16) for h in spec["bits"]], width).view(dt)
    vals = [float(v) if isinstance(v, str) else v for v in spec["values"]]
    return np.array(vals, dtype=np.float64 if dt.kind == "f" or dt == ml_dtypes.bfloat16 else np.int64).astype(dt)


def bits(a):
    a = np.asarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def products(v):
    return [Product.get(k) for k in v["product"]]


def place(pipe, position, arr, addr=None, size=None):
    t = pipe.alloc(position, arr.dtype, max(arr.size, size or 0), addr=addr)
    t.numpy()[:arr.size] = arr
    t.set_defined()
    return t


def load_a(pipe, a: np.ndarray, k0: int, dtype):
    """Matrix ``a`` (already padded to whole fractals) into L0A in the product's layout."""
    rows, cols = a.shape
    layout = fractal.buffer_layout(pipe.product, fractal.Phys.L0A)
    pitch = rows // 16 if layout == "Nz" else cols // k0
    flat = np.zeros(rows * cols, dtype)
    flat[fractal.offsets(layout, rows, cols, (16, k0), pitch)] = a
    return place(pipe, TPosition.A2, flat)


def load_b(pipe, b: np.ndarray, k0: int, dtype):
    rows, cols = b.shape
    flat = np.zeros(rows * cols, dtype)
    flat[fractal.offsets("Zn", rows, cols, (k0, 16), cols // 16)] = b
    return place(pipe, TPosition.B2, flat)


def fresh(product):
    return TPipe(product=product)
