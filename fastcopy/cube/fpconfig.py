"""The Fixpipe template configuration (output layout, UB destination) and its three named values.

Apart from the parameter structs (:mod:`fastcopy.cube.outparams`, which re-exports these) so that the entry point's
default ``config=CFG_ROW_MAJOR`` costs nothing at ``import fastcopy``.
"""

from __future__ import annotations

import enum


class CO2Layout(enum.Enum):
    """Layout of a Fixpipe output: NZ (fractals), ROW_MAJOR (NZ2ND), COLUMN_MAJOR (NZ2DN, Atlas 350)."""

    NZ = 0
    ROW_MAJOR = 1
    COLUMN_MAJOR = 2


class FixpipeConfig:
    """The Fixpipe template configuration: output layout and (Atlas 350) whether the destination is UB."""

    __slots__ = ("format", "isToUB")

    def __init__(self, format: CO2Layout = CO2Layout.ROW_MAJOR, isToUB: bool = False):  # noqa: A002, N803
        self.format, self.isToUB = CO2Layout(format), bool(isToUB)

    def __repr__(self) -> str:
        return f"FixpipeConfig({self.format.name}, isToUB={self.isToUB})"


CFG_NZ = FixpipeConfig(CO2Layout.NZ)
CFG_ROW_MAJOR = FixpipeConfig(CO2Layout.ROW_MAJOR)
CFG_COLUMN_MAJOR = FixpipeConfig(CO2Layout.COLUMN_MAJOR)
