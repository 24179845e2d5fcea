"""fastcopy's warnings collected per thread, exactly (errors.start_collecting): what another thread does with
Python's warnings meanwhile (a ``catch_warnings``, which swaps the process's filters and display for every
thread) neither turns a collected warning into an issued one nor takes it; and the engine never swaps them
itself, so two programs with compute steps in two threads (Dask's threaded workers) leave them as they were."""

from __future__ import annotations

import sys
import threading
import warnings

import pytest
from test_batch_point import _two_copies  # (GM -> UB of count halves, 40 warns, and back)

import fastcopy
from fastcopy.errors import FastCopyWarning, collecting, start_collecting, stop_collecting, warn
from fastcopy.golden import case_from_dict, run_program

WAIT = 30  # seconds: a step that never comes fails the test instead of hanging it


def _set_and_wait(mine: threading.Event, theirs: threading.Event) -> None:
    mine.set()
    assert theirs.wait(WAIT)


def _shown(seen) -> list:
    return [str(w.message) for w in seen if issubclass(w.category, FastCopyWarning)]


def _inside_catch_warnings(after: threading.Event, mine: threading.Event, until: threading.Event, into: list):
    """The other thread: once ``after`` is set, inside ``catch_warnings(record=True)`` (new filters and display
    for the whole process), says so (``mine``) and stays there until ``until``; its record goes to ``into``."""
    assert after.wait(WAIT)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        _set_and_wait(mine, until)
    into.extend(seen)


def test_a_collection_stays_one_while_another_thread_is_inside_catch_warnings():
    """Thread A collects; thread B enters ``catch_warnings(record=True)`` (new filters for the whole process);
    A warns: A's list gets it, B's record does not, nothing is shown."""
    a_collecting, b_inside, a_warned = threading.Event(), threading.Event(), threading.Event()
    got, b_seen = [], []

    def a():
        before = start_collecting(got)
        try:
            _set_and_wait(a_collecting, b_inside)
            warn("from a")
        finally:
            stop_collecting(before)
        a_warned.set()

    def b():
        _inside_catch_warnings(a_collecting, b_inside, a_warned, b_seen)

    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        threads = [threading.Thread(target=f) for f in (a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert got == [(FastCopyWarning, "from a")]
    assert _shown(b_seen) == [] and _shown(shown) == []


def test_a_programs_warnings_stay_its_own_while_another_thread_catches_warnings(monkeypatch):
    """A program's first op (the one that warns) starts while another thread is inside ``catch_warnings``: the
    warning is the op's, in the program's result, and the other thread's record does not have it."""
    op_started, b_inside, program_done = threading.Event(), threading.Event(), threading.Event()
    real = fastcopy.DataCopy

    def data_copy(*args, **kwargs):  # (the engine looks fastcopy.DataCopy up at every op)
        if threading.current_thread() is runner and not op_started.is_set():
            _set_and_wait(op_started, b_inside)
        return real(*args, **kwargs)

    monkeypatch.setattr(fastcopy, "DataCopy", data_copy)
    results, b_seen = [], []

    def a():
        try:
            results.append(run_program(_two_copies(40)))
        finally:
            program_done.set()

    runner = threading.Thread(target=a)
    other = threading.Thread(target=_inside_catch_warnings, args=(op_started, b_inside, program_done, b_seen))
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        for t in (runner, other):
            t.start()
        for t in (runner, other):
            t.join()
    assert list(results[0].warnings) == [0] and "rounded down" in results[0].warnings[0][0]
    assert _shown(b_seen) == [] and _shown(shown) == []


COMPUTE = '''
import sys

from fastcopy.errors import warn

EVENTS = sys.modules[{module!r}].EVENTS


def step(u, tag):
    mine, theirs = EVENTS[tag]
    mine.set()
    warn(f"step {{tag}}")
    assert theirs.wait({wait})
'''

EVENTS: dict = {}


def _compute_case(tmp_path, tag: int):
    return case_from_dict({
        "name": "c", "product": "ATLAS_A2", "outputs": [{"buffer": "y", "allow_undefined": True}],
        "sweep": {"tag": [0, 1]},
        "buffers": {"x": {"dtype": "half", "shape": [64], "init": {"kind": "arange"}},
                    "u": {"position": "VECIN", "dtype": "half", "count": 64},
                    "y": {"dtype": "half", "shape": [64]}},
        "ops": [{"api": "DataCopy", "dst": "u", "src": "x", "params": {"count": 64}},
                {"compute": "step.py:step", "buffers": ["u"]},
                {"api": "DataCopy", "dst": "y", "src": "u", "params": {"count": 64}}]},
        str(tmp_path / "c.toml"), base_dir=str(tmp_path), allow_python=True).point(tag)


def test_two_compute_programs_at_once_keep_their_warnings_and_the_process_filters(tmp_path):
    """Two programs in two threads, each inside its compute step while the other enters, leaves and finishes its
    own (the order in which catch_warnings blocks would leave the process with one thread's filters and record
    for good): each compute op has exactly its own warning, and the process's filters and display are those
    of before."""
    (tmp_path / "step.py").write_text(COMPUTE.format(module=__name__, wait=WAIT))
    in_a, a_done = threading.Event(), threading.Event()
    in_b, b_may_leave = threading.Event(), threading.Event()
    EVENTS.update({0: (in_a, in_b), 1: (in_b, b_may_leave)})
    progs = [_compute_case(tmp_path, 0), _compute_case(tmp_path, 1)]
    results = {}

    def run(k):
        if k == 1:
            assert in_a.wait(WAIT)
        try:
            results[k] = run_program(progs[k])
        finally:
            if k == 0:
                a_done.set()
                b_may_leave.set()

    try:
        with warnings.catch_warnings(record=True) as shown:
            warnings.simplefilter("always")
            filters, display = warnings.filters, (warnings.showwarning, warnings._showwarnmsg_impl)
            threads = [threading.Thread(target=run, args=(k,)) for k in (0, 1)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert warnings.filters is filters
            assert (warnings.showwarning, warnings._showwarnmsg_impl) == display
    finally:
        EVENTS.clear()
    assert results[0].warnings == {1: ["step 0"]} and results[1].warnings == {1: ["step 1"]}
    assert _shown(shown) == []


# ------------------------------------------------------------------------------ one thread: nesting, located
def test_a_nested_collection_takes_its_own_and_the_outer_one_goes_on():
    outer = []
    before = start_collecting(outer)
    try:
        warn("one")
        with collecting() as inner:
            warn("two")
            with warnings.catch_warnings(record=True) as seen:  # (inside a collection: not fastcopy's)
                warnings.simplefilter("always")
                warn("three")
        warn("four")
    finally:
        stop_collecting(before)
    assert [m for _, m in outer] == ["one", "four"] and [m for _, m in inner] == ["two", "three"]
    assert _shown(seen) == []


def test_a_located_collection_names_the_users_line():
    """What on_op's warnings are collected as: a WarningMessage at the user's line, to be issued again later."""
    with collecting(located=True) as got:
        warn("here")
        line = sys._getframe().f_lineno - 1
    assert [(str(w.message), w.category, w.filename, w.lineno) for w in got] == [
        ("here", FastCopyWarning, __file__, line)]


@pytest.mark.parametrize("action", ["error", "ignore", "always"])
def test_on_ops_fastcopy_warnings_are_issued_after_the_program_at_their_line(action):
    """on_op (user code between two ops): fastcopy's warnings belong to no op and are issued again after the
    program at the line that issued them; a filter set inside on_op (a catch_warnings of its own) is not what
    decides: they are collected."""
    def on_op(op, tensors):
        with warnings.catch_warnings():
            warnings.simplefilter(action)
            warn(f"before op {op.index}")  # (the line the warnings must name)

    line = on_op.__code__.co_firstlineno + 3
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = run_program(_two_copies(64), on_op=on_op)
    assert result.warnings == {}
    assert [(str(w.message), w.filename, w.lineno) for w in seen] == [
        (f"before op {k}", __file__, line) for k in (0, 1)]
