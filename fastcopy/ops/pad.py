"""DataCopyPad (spec 4). Owned by the DataCopyPad issue; stub until it lands."""

import enum


class PaddingMode(enum.Enum):
    Normal = 0
    Compact = 1


def DataCopyPad(dst, src, *args, **kwargs):  # noqa: N802
    raise NotImplementedError("DataCopyPad is not implemented yet")


def SetPadValue(value, pipe=None):  # noqa: N802
    raise NotImplementedError("SetPadValue is not implemented yet")
