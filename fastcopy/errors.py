"""One error hierarchy and one warning class.

Every message names the API, the field, the value, the allowed range and unit, and the product, e.g.
``DataCopy(Nd2NzParams): dValue=70000 is outside [0, 65535] elements (uint16_t) on Atlas A2``.
On any error nothing has been written.
"""

from __future__ import annotations

import contextlib
import sys
import threading


class FastCopyError(Exception):
    """Base class of every error fastcopy raises. Nothing is written when one is raised."""


class ParamError(FastCopyError, ValueError):
    """A parameter value is not allowed: outside its C++ type or its documented range, or inconsistent."""


class ParamTypeError(ParamError, TypeError):
    """A value cannot be stored in the C++ type of its field (it would wrap on the device), or is not a value of
    that kind at all (a bool, a fraction or a string where an integer belongs). Also a TypeError."""


class RangeError(ParamError):
    """A value fits its C++ type but is outside the documented range for this product and path."""


class AlignmentError(FastCopyError, ValueError):
    """A tensor start address (or a derived address) is not aligned as the path requires."""


class UnsupportedError(FastCopyError, TypeError):
    """The hardware cannot do this: path, dtype or prototype not available on this product."""


class OutOfBoundsError(FastCopyError, IndexError):
    """A byte span the call reads or writes is not inside its tensor."""


class CapacityError(FastCopyError, MemoryError):
    """An on-chip buffer has no room for an allocation, or a call would need more working memory than the
    configured limit (the exact path)."""


class ReadOnlyError(FastCopyError, ValueError):
    """The destination is a read-only array: fastcopy never writes into memory numpy marks unwritable."""


class CompareError(FastCopyError):
    """A comparison of an output with golden data that cannot be set up (unknown rule, bad tolerance, a rule's
    missing inputs); ``fastcopy.golden.verify``."""


class FastCopyWarning(UserWarning):
    """What the hardware does but is almost never meant (rounding, overlaps, emulation limits, undefined fills)."""


_PACKAGE_DIR = __file__[: __file__.rindex("errors")]  # the package folder, as its code objects name it


class _Collecting(threading.local):
    into = None  # the list this thread's warnings go to while a caller collects them
    located = False  # whether they go there located (a WarningMessage at the user's line) or as (category, text)


_COLLECTING = _Collecting()


def start_collecting(into, located: bool = False):
    """From now on, in this thread only, :func:`warn` appends ``(category, message)`` to ``into`` instead of
    issuing the warning (``located``: a ``warnings.WarningMessage`` naming the user's line, what
    ``catch_warnings(record=True)`` would have recorded, to be issued again later with ``warn_explicit``;
    ``into=None``: issued again, as outside any collection). Exact per thread: what other threads do meanwhile
    (their own collections, a ``warnings.catch_warnings()``, which swaps the process's filters) changes nothing
    here, and nothing collected reaches the process's filters or display. Inside a collection a
    ``catch_warnings()`` does not see fastcopy's warnings: a nested collection does (:func:`collecting`).
    Returns what was collecting before: give it to :func:`stop_collecting` when done. The case engine
    attributes each op's warnings this way, without swapping the process's filters at every program."""
    c = _COLLECTING
    before = (c.into, c.located)
    c.into, c.located = into, located
    return before


def stop_collecting(before) -> None:
    """The end of a :func:`start_collecting` (``before``: what it returned)."""
    _COLLECTING.into, _COLLECTING.located = before


@contextlib.contextmanager
def collecting(located: bool = False):
    """``with collecting() as got:`` the warnings fastcopy issues in this thread inside the block, collected into
    the list ``got`` (:func:`start_collecting`), nested collections included."""
    got = []
    before = start_collecting(got, located)
    try:
        yield got
    finally:
        stop_collecting(before)


def warn(message: str, category: type = FastCopyWarning) -> None:
    """Issue ``message`` attributed to the user's line: the first frame outside the fastcopy package (what
    Python 3.12's ``skip_file_prefixes`` does; found only when a warning is issued, so free otherwise); or
    collect it (:func:`start_collecting`)."""
    into = _COLLECTING.into
    if into is not None and not _COLLECTING.located:
        into.append((category, message))
        return
    import warnings

    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    if into is None:
        warnings.warn(message, category, stacklevel=level)
    elif frame is None:  # (no frame outside the package: where warnings.warn says)
        into.append(warnings.WarningMessage(category(message), category, "sys", 1))
    else:
        into.append(warnings.WarningMessage(category(message), category, frame.f_code.co_filename, frame.f_lineno))
