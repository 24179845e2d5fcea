"""Case files the golden-engine tests write: a half copy GM -> VECIN (``u``), a compute step, then more ops."""

from __future__ import annotations


def compute_case(name: str, count_in: int, tail: str) -> str:
    """The TOML text of case ``name``: 256 half elements ``xGm`` (arange) -> ``u`` (``count_in`` copied),
    ``compute = "step.py:step"`` over ``u``, then the ``[[ops]]`` of ``tail``; output ``yGm`` (256 half)."""
    return f"""
name = "{name}"
product = "ATLAS_A2"
outputs = ["yGm"]

[buffers.xGm]
dtype = "half"
shape = [256]
init = "arange"

[buffers.u]
position = "VECIN"
dtype = "half"
count = 256

[buffers.yGm]
dtype = "half"
shape = [256]

[[ops]]
api = "DataCopy"
dst = "u"
src = "xGm"
params = {{count = {count_in}}}

[[ops]]
compute = "step.py:step"
buffers = ["u"]
{tail}"""
