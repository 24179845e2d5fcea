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


class NibbleWriter:
    """:class:`ByteWriter` for 4-bit values: writes address nibbles (nibble ``2b`` is the low half of byte
    ``b``). A nibble written twice with a different value or definedness makes its byte undefined; a byte with
    only one nibble written keeps the other nibble and its definedness."""

    def __init__(self, data: np.ndarray, defined: np.ndarray, poison: int = 0xFF):
        self.bytes = ByteWriter(data, defined, poison)
        self._value = {}
        self._conflict = set()

    def write(self, nibble: int, value: int, defined: bool) -> None:
        new = (int(value) & 0xF, bool(defined))
        old = self._value.get(nibble)
        if old is not None and old != new:
            self._conflict.add(nibble)
        self._value[nibble] = new

    def finish(self) -> None:
        data, flags = self.bytes.data, self.bytes.defined
        for b in sorted({q // 2 for q in self._value}):
            halves = []
            for q, shift in ((2 * b, 0), (2 * b + 1, 4)):
                old = ((int(data[b]) >> shift) & 0xF, bool(flags[b]))
                halves.append(self._value.get(q, old))
            if any(q in self._conflict for q in (2 * b, 2 * b + 1)):
                self.bytes.write_undefined(b, 1)
            else:
                self.bytes.write(b, bytes([halves[0][0] | halves[1][0] << 4]), halves[0][1] and halves[1][1])
        self.bytes.finish()


def nibble(src: np.ndarray, src_def: np.ndarray, q: int) -> tuple:
    """(value, defined) of source nibble ``q``."""
    if q < 0 or q // 2 >= src.size:
        raise IndexError(f"reference read of nibble {q} outside [0, {2 * src.size})")
    return (int(src[q // 2]) >> (4 * (q % 2))) & 0xF, bool(src_def[q // 2])
