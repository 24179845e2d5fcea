"""Byte-level destination model shared by the reference implementations.

The reference ops describe a call as an ordered list of byte writes; :class:`ByteWriter` applies them to a
copy of the destination (data bytes + definedness) with the rules of docs/semantics.md:

* untouched bytes keep their contents and definedness;
* a write carries, per byte, a value and a defined flag; a copied source byte keeps its value and
  definedness, a fill with no documented value writes the poison byte as undefined;
* a byte written more than once within one call with a different value or definedness becomes undefined
  and holds the poison byte (semantics.md §11.2); rewritten identically it keeps that value and flag.
"""

from __future__ import annotations

import numpy as np


class ByteWriter:
    """Collect the writes of one call, then resolve them onto ``data``/``defined`` in place."""

    def __init__(self, data: np.ndarray, defined: np.ndarray, poison: int = 0xFF):
        assert data.dtype == np.uint8 and defined.dtype == np.bool_ and data.shape == defined.shape
        self.data = data
        self.defined = defined
        self.poison = poison
        self._value = {}  # byte offset -> (value, defined) of the last write
        self._conflict = set()  # offsets written twice with different values / definedness

    def write(self, offset: int, values, defined=True) -> None:
        """Write ``values`` (bytes-like / uint8 array) at byte ``offset``; ``defined`` is a bool or a bool array."""
        values = np.asarray(bytearray(values) if isinstance(values, (bytes, bytearray)) else values, dtype=np.uint8)
        flags = np.broadcast_to(np.asarray(defined, dtype=bool), values.shape)
        for k in range(values.size):
            q = offset + k
            if not (0 <= q < self.data.size):
                raise IndexError(f"reference write at byte {q} outside [0, {self.data.size})")
            new = (int(values[k]), bool(flags[k]))
            old = self._value.get(q)
            if old is not None and old != new:
                self._conflict.add(q)
            self._value[q] = new

    def write_undefined(self, offset: int, nbytes: int) -> None:
        self.write(offset, np.full(nbytes, self.poison, np.uint8), False)

    def finish(self) -> None:
        for q, (v, d) in self._value.items():
            if q in self._conflict:
                v, d = self.poison, False
            self.data[q] = v
            self.defined[q] = d
