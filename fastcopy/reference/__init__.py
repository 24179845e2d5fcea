"""Readable numpy reference implementations of every op, written from docs/semantics.md: the test oracle.

They work on tensor byte arrays (``dst``/``dst_def`` modified in place, ``src``/``src_def`` read) and never
validate. The fast path never imports them.
"""
