"""One error hierarchy and one warning class.

Every message names the API, the field, the value, the allowed range and unit, and the product, e.g.
``DataCopy(Nd2NzParams): dValue=70000 is outside [0, 65535] elements (uint16_t) on Atlas A2``.
On any error nothing has been written.
"""

from __future__ import annotations

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
    into = None  # (list, warnings.filters when the collection began) while a caller collects this thread's warnings


_COLLECTING = _Collecting()


def start_collecting(into: list):
    """From now on (in this thread), :func:`warn` appends ``(category, message)`` to ``into`` instead of issuing
    the warning, while Python's warning filters are the list they are now: code that enters
    ``warnings.catch_warnings()`` meanwhile (which replaces that list) sees the warnings it issues, as before.
    Returns what was collecting before: give it to :func:`stop_collecting` when done. The case engine
    attributes each op's warnings this way: what ``catch_warnings(record=True)`` with an ``"always"`` filter for
    FastCopyWarnings gives it, without swapping the process's filters at every program."""
    before = _COLLECTING.into
    _COLLECTING.into = (into, sys.modules["warnings"].filters)  # (its caller imported warnings)
    return before


def stop_collecting(before) -> None:
    """The end of a :func:`start_collecting` (``before``: what it returned)."""
    _COLLECTING.into = before


def warn(message: str, category: type = FastCopyWarning) -> None:
    """Issue ``message`` attributed to the user's line: the first frame outside the fastcopy package (what
    Python 3.12's ``skip_file_prefixes`` does; found only when a warning is issued, so free otherwise); or
    collect it (:func:`start_collecting`)."""
    import sys
    import warnings

    into = _COLLECTING.into
    if into is not None and warnings.filters is into[1]:
        into[0].append((category, message))
        return
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
