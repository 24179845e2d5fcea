"""``import fastcopy`` loads what a first DataCopy needs and nothing more; every public name is still there.

The cube path, the pictures, the golden-data tools, numba and a few heavy standard modules load on first use
(PEP 562 ``__getattr__`` in fastcopy/__init__.py, stand-ins in fastcopy/api.py). These tests run fresh
interpreters, so what an earlier test imported does not hide a regression.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import fastcopy

#: modules that ``import fastcopy`` must not load (prefixes: a package and everything under it)
MUST_STAY_LAZY = [
    "numba", "fastcopy.kernels", "fastcopy.golden", "fastcopy.cli", "fastcopy.explain", "fastcopy.testing",
    "fastcopy.reference", "fastcopy.slicing",
    "fastcopy.cube.params", "fastcopy.cube.outparams", "fastcopy.cube.fixpipe", "fastcopy.cube.mmad",
    "fastcopy.cube.img2col", "fastcopy.cube.loaddata", "fastcopy.cube.load3d_v1", "fastcopy.cube.dn2nz",
    "fastcopy.cube.b4", "fastcopy.cube.hif8", "fastcopy.cube.enhanced", "fastcopy.cube.quant",
    "fastcopy.cube.state", "fastcopy.cube.registers", "fastcopy.cube.images",
    # standard modules numpy does not load either
    "dataclasses", "pathlib", "concurrent", "tomllib", "json", "hashlib", "multiprocessing", "argparse", "tempfile",
]


def _fresh(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [os.path.dirname(os.path.dirname(
        fastcopy.__file__)), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env=env).stdout.strip()


def test_import_loads_none_of_the_lazy_modules():
    # only what the import itself loads: the interpreter's start-up may have loaded some already (an editable
    # install's import finder, run from a .pth file at start-up, imports pathlib)
    loaded = json.loads(_fresh("import sys, json\nbefore = set(sys.modules)\nimport fastcopy\n"
                               "print(json.dumps([m for m in sys.modules if m not in before]))"))
    bad = sorted(m for m in loaded for lazy in MUST_STAY_LAZY if m == lazy or m.startswith(lazy + "."))
    assert not bad, f"import fastcopy loads {bad}"


def test_a_first_datacopy_loads_no_cube_module():
    code = """
import sys, numpy as np, fastcopy as fc
pipe = fc.TPipe()
x = pipe.alloc(fc.TPosition.VECIN, "half", 512)
fc.DataCopy(x, fc.GlobalTensor(np.arange(512, dtype=np.float16)), fc.DataCopyParams(1, 32, 0, 0))
fc.DataCopyPad(x, fc.GlobalTensor(np.ones(8, np.float16)), fc.DataCopyExtParams(1, 16, 0, 0, 0),
               fc.DataCopyPadExtParams(False, 0, 0, 0))
print(sorted(m for m in sys.modules if m.startswith("fastcopy.cube.")))
"""
    assert _fresh(code) == "['fastcopy.cube.fpconfig']"


def test_every_public_name_resolves_in_a_fresh_process():
    code = """
import fastcopy
missing = [n for n in fastcopy.__all__ if getattr(fastcopy, n, None) is None]
ns = {}
exec("from fastcopy import *", ns)
print(missing, sorted(set(fastcopy.__all__) - set(ns)), sorted(set(fastcopy.__all__) - set(dir(fastcopy))))
"""
    assert _fresh(code) == "[] [] []"


@pytest.mark.parametrize("name", sorted(fastcopy.__all__))
def test_every_name_in_all_resolves(name):
    value = getattr(fastcopy, name)
    assert value is not None
    assert name in dir(fastcopy)


def test_lazy_names_are_the_objects_of_their_modules():
    import importlib

    for name, where in fastcopy._LAZY.items():
        value = getattr(fastcopy, name)
        if where.endswith(":"):
            assert value is importlib.import_module(where[:-1])
        elif name != "explain":
            assert value is getattr(importlib.import_module(where), name), name
    assert fastcopy.explain is importlib.import_module("fastcopy.explain").explain


def test_explain_stays_the_function_when_its_subpackage_is_imported_first():
    code = """
import fastcopy
import fastcopy.explain.case
from fastcopy.explain import trace
print(callable(fastcopy.explain), fastcopy.explain.__module__)
"""
    assert _fresh(code) == "True fastcopy.explain"


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'NoSuchThing'"):
        fastcopy.NoSuchThing  # noqa: B018


def test_cube_dispatch_works_after_a_lazy_start():
    """DataCopy's cube forms and the LoadData forms resolve their classes on first use."""
    code = """
import numpy as np, fastcopy as fc
from fastcopy import api
print([k.__name__ for k in api.DATACOPY_FORMS][3:], len(api.LOADDATA_FORMS))
try:
    fc.DataCopy(None, None, 1.5)
except fc.FastCopyError as e:
    print("Dn2NzParams" in str(e))
"""
    assert _fresh(code) == "['Dn2NzParams', 'DataCopyCO12DstParams'] 5\nTrue"
