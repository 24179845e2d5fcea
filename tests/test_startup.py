"""The start of a ``fastcopy`` command made shorter, with nothing a user sees changed.

- Imports run with the cyclic collector paused (:class:`fastcopy.lazy.paused_collector`): the collector is on
  again after, the objects made stay collectable, a process's own settings (collector off, frozen objects) are
  kept.
- The command line builds only the named command's options, and its help formatter reads the terminal's width
  (importing ``shutil``) only when it formats: the help, usage and errors are argparse's own, byte for byte.
- A plainly written command line is read without argparse (:func:`fastcopy.cli.plain_args`), into what argparse
  makes of it; every other line goes to argparse.
- The command's process ends without the interpreter's teardown (tests/test_cli_exit.py).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import pathlib
import subprocess
import sys
import weakref

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastcopy import cli
from fastcopy.cli.parser import Formatter
from fastcopy.lazy import paused_collector

ROOT = pathlib.Path(__file__).resolve().parents[1]
GOOD = ROOT / "examples" / "slice_rows.toml"


def _fresh(code: str, *args) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env,
                          cwd=str(ROOT), timeout=300, check=True)


# ---------------------------------------------------------------------------------------- paused collector
class _Node:
    pass


def _cycle() -> weakref.ref:
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_import_fastcopy_makes_no_collection_and_leaves_the_collector_as_it_was():
    # (the import system may collect while it looks for the package, before any of its modules runs)
    code = ("import gc, json, sys\nseen = []\n"
            "gc.callbacks.append(lambda phase, info: seen.append('numpy' in sys.modules))\n"
            "import fastcopy, fastcopy.golden\n"
            "print(json.dumps([any(seen), gc.isenabled(), gc.get_freeze_count(), 'numpy' in sys.modules]))\n")
    assert json.loads(_fresh(code).stdout) == [False, True, 0, True]
    off = json.loads(_fresh("import gc, json\ngc.disable()\nimport fastcopy.golden\n"
                            "print(json.dumps([gc.isenabled(), gc.get_freeze_count()]))").stdout)
    assert off == [False, 0]


def test_objects_made_while_paused_join_the_oldest_generation_and_stay_collectable(collector_on):
    with paused_collector():
        assert not gc.isenabled()
        kept = _Node()
        dead = _cycle()
        assert dead() is not None  # (no collection inside the block)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    young = gc.get_objects(generation=0) + gc.get_objects(generation=1)
    assert not any(o is kept for o in young)
    assert any(o is kept for o in gc.get_objects(generation=2))
    gc.collect()
    assert dead() is None


def test_the_callers_young_objects_move_with_them_and_a_full_collection_frees_them(collector_on):
    """What the freeze at the end of a block does to the objects made before it (lazy.paused_collector's
    docstring, docs/batch.md): they join the oldest generation too, so a cycle dropped just before outlives the
    young passes and is freed by a full collection."""
    gc.collect()
    dead = _cycle()
    with paused_collector():
        pass
    gc.collect(0)
    gc.collect(1)
    assert dead() is not None
    gc.collect()
    assert dead() is None


def test_the_collector_is_restored_on_error_and_nested_blocks_leave_it_to_the_outermost(collector_on):
    with pytest.raises(RuntimeError):
        with paused_collector():
            raise RuntimeError
    assert gc.isenabled()
    with paused_collector():
        with paused_collector():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_collector():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_process_with_frozen_objects_keeps_them_frozen():
    """In a process of its own: here, another thread (a crew helper, Dask's offload thread) may free frozen
    objects between the two counts (the whole suite failed so, 531857 -> 531855)."""
    code = ("import gc, json\nfrom fastcopy.lazy import paused_collector\n"
            "class Node:\n    pass\n"
            "gc.enable()\ngc.freeze()  # (every object alive now)\ncount = gc.get_freeze_count()\n"
            "with paused_collector():\n    made = Node()\n"
            "print(json.dumps([count > 0, gc.get_freeze_count() == count, gc.isenabled(),\n"
            "                  any(o is made for o in gc.get_objects(generation=0))]))  # (left where it was made)\n")
    assert json.loads(_fresh(code).stdout) == [True, True, True, True]


# ---------------------------------------------------------------------------------------- command line
def _parsers(parser) -> dict:
    """'' -> the top parser, name -> each command's parser."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {"": parser, **sub.choices}


@pytest.mark.parametrize("argv", [
    ["batch", "a.toml", "b.toml", "-o", "out", "--jobs", "2", "--seed", "0x10", "--max-bytes", "2G", "--resume"],
    ["batch", "a.toml", "-o", "out", "--no-progress", "-q", "--chunk-size", "3", "--dask", "local:2"],
    ["run", "a.toml", "--point", "3", "-o", "x", "--strict"],
    ["check", "a.toml", "--seed", "5", "-v"],
    ["verify", "o.bin", "g", "--rtol", "1e-3", "--shape", "2", "3", "--no-mask", "--compare", "allclose"],
    ["demo", "-o", "d"], ["warmup"], ["explain", "a.toml", "--op", "2", "--color", "never"],
])
def test_one_commands_parser_parses_as_the_whole_parser(argv):
    assert cli.build_parser(argv[0]).parse_args(argv) == cli.build_parser().parse_args(argv)


def _exit(parser, argv, capsys) -> tuple:
    with pytest.raises(SystemExit) as info:
        parser.parse_args(argv)
    out = capsys.readouterr()
    return info.value.code, out.out, out.err


@pytest.mark.parametrize("argv", [["batch"], ["batch", "a", "--jobs", "x"], ["batch", "a", "-o", "o", "--bogus"],
                                  ["run"], ["verify", "a"], ["check", "--point", "2"], ["warmup", "x"],
                                  ["explain"], ["batch", "--help"], ["explain", "-h"]])
def test_one_commands_parser_fails_and_helps_as_the_whole_parser(argv, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "64")
    assert _exit(cli.build_parser(argv[0]), argv, capsys) == _exit(cli.build_parser(), argv, capsys)


def test_main_builds_only_the_named_commands_options(monkeypatch):
    built = []
    real = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", lambda command=None: built.append(command) or real(command))
    with pytest.raises(SystemExit):
        cli.main(["batch", "--help"])
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    with pytest.raises(SystemExit):
        cli.main(["bat", "x"])  # (not a command: argparse's error, from the whole parser)
    assert built == ["batch", None, None]


@pytest.mark.parametrize("columns", ["40", "80", "131", "250"])
def test_help_is_argparses_own_at_every_width(columns, monkeypatch):
    monkeypatch.setenv("COLUMNS", columns)
    for name, parser in _parsers(cli.build_parser()).items():
        ours = parser.format_help(), parser.format_usage()
        parser.formatter_class = argparse.HelpFormatter
        assert (parser.format_help(), parser.format_usage()) == ours, name
        assert parser.prog == f"fastcopy {name}".strip()


def test_the_formatter_reads_the_width_when_it_formats(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    f = Formatter("fastcopy")
    monkeypatch.setenv("COLUMNS", "60")  # (read now, at the first use, as a formatter made now would)
    plain = argparse.HelpFormatter("fastcopy")
    assert (f._width, f._max_help_position) == (plain._width, plain._max_help_position) == (58, 24)
    given = Formatter("fastcopy", max_help_position=30, width=70)
    assert (given._width, given._max_help_position) == (70, 30)
    with pytest.raises(AttributeError):
        f.no_such_thing  # noqa: B018


def test_a_batch_imports_neither_argparse_nor_shutil_nor_the_other_commands(tmp_path):
    code = ("import json, sys\nfrom fastcopy.cli import main\n"
            "status = main(['batch', sys.argv[1], '-o', sys.argv[2], '--no-progress', '-q'])\n"
            "print(json.dumps([status] + sorted(m for m in ('shutil', 'bz2', 'lzma', 'fastcopy.cli.explain', "
            "'fastcopy.cli.run', 'fastcopy.explain', 'argparse', 'gettext', 'locale', 'fastcopy.cli.parser') "
            "if m in sys.modules)))\n")
    assert json.loads(_fresh(code, str(GOOD), str(tmp_path / "out")).stdout.splitlines()[-1]) == [0]
    assert (tmp_path / "out" / "slice_rows" / "manifest.json").is_file()


def test_a_batch_of_basic_copies_imports_no_other_planner(tmp_path):
    """The ND<->NZ, slice and UB -> TSCM planners (fastcopy.api's stand-ins) and the cube load on their first call."""
    code = ("import json, sys\nfrom fastcopy.cli import main\n"
            "status = main(['batch', sys.argv[1], '-o', sys.argv[2], '--no-progress', '-q'])\n"
            "print(json.dumps([status] + sorted(m for m in sys.modules if m in ('fastcopy.ops.nz', "
            "'fastcopy.ops.slice', 'fastcopy.ops.pad_tscm') or m.startswith('fastcopy.cube.') "
            "and m != 'fastcopy.cube.fpconfig')))\n")
    case = ROOT / "examples" / "datacopy_tiles.toml"
    assert json.loads(_fresh(code, str(case), str(tmp_path / "out")).stdout.splitlines()[-1]) == [0]


# ---------------------------------------------------------------------------------------- plain command lines
def _argparse_reads(argv):
    """vars() of the namespace argparse makes of ``argv``, or None when it stops (an error, the help)."""
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            return vars(cli.build_parser().parse_args(argv))
    except SystemExit:
        return None


PLAIN = [
    ["batch", "a.toml", "-o", "out", "--jobs", "1", "--no-progress"],  # (bench/bench_batch.py's line)
    ["batch", "a.toml", "b.toml", "-o", "out", "--jobs", "2", "--seed", "0x10", "--max-bytes", "2G", "--resume"],
    ["batch", "-o", "out", "-q", "a.toml", "b.toml", "--chunk-size", "3", "--dask", "local:2", "-v", "--strict"],
    ["batch", "--allow-python", "a.toml", "--output", "o", "-j", "3"],
    ["run", "a.toml", "--point", "3", "-o", "x", "--strict"], ["run", "a.toml"], ["check", "a.toml", "--seed", "5"],
    ["verify", "o.bin", "g", "--rtol", "1e-3", "--no-mask", "--compare", "allclose", "--max-report", "3"],
    ["demo", "-o", "d"], ["demo"], ["warmup"],
]


@pytest.mark.parametrize("argv", PLAIN)
def test_a_plain_line_is_read_without_argparse_as_argparse_reads_it(argv):
    ours = cli.plain_args(argv)
    assert ours is not None
    assert vars(ours) == _argparse_reads(argv)


@pytest.mark.parametrize("argv", [
    ["batch", "a.toml", "-o", "out", "--jobs", "x"], ["batch", "a.toml"], ["batch", "-o", "out"],
    ["batch", "a.toml", "-o", "out", "b.toml"], ["batch", "a.toml", "--out", "o"], ["batch", "a.toml", "-o=o"],
    ["batch", "a.toml", "-o", "o", "-qv"], ["batch", "a.toml", "-o", "o", "-o", "p"], ["batch", "a", "-o", "-x"],
    ["batch", "a", "-o", ""], ["batch", "a", "-o", "o", "--"], ["batch", "-", "-o", "o"], ["batch", "a", "-o"],
    ["batch", "a", "-o", "o", "--seed", "-1"], ["batch", "a", "-o", "o", "-h"], ["batch", "a", "-o", "o", "--version"],
    ["run", "a", "b"], ["run"], ["verify", "a"], ["verify", "a", "b", "--shape", "2", "3"], ["warmup", "x"],
    ["explain", "a.toml"], ["--version"], ["bat", "a", "-o", "o"], [], ["batch", "a", "-o", "o", "--max-bytes", "0"],
])
def test_every_other_line_goes_to_argparse(argv):
    assert cli.plain_args(argv) is None


_WORDS = ["a.toml", "b", "1", "0x10", "-1", "", "2G", "x y", "-", "--", "-o", "--output", "--out", "-o=p", "-j",
          "--jobs", "--seed", "--max-bytes", "--strict", "-q", "-v", "-qv", "--no-progress", "--resume", "--dask",
          "--chunk-size", "--point", "--rtol", "--atol", "--shape", "--no-mask", "--compare", "-h", "--allow-python"]


_VALUES = ["a.toml", "b", "1", "0x10", "-1", "", "2G", "x y", "1e-3", "0"]
#: a piece of a line: any word, or an option followed by a value (most plain lines are made of these)
_PIECES = st.one_of(st.sampled_from(_WORDS).map(lambda w: [w]),
                    st.tuples(st.sampled_from([w for w in _WORDS if w.startswith("-")]), st.sampled_from(_VALUES))
                    .map(list))


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(sorted(cli.COMMANDS)), st.lists(_PIECES, max_size=7))
def test_a_line_read_without_argparse_is_always_read_as_argparse_reads_it(command, pieces):
    argv = [command, *(w for piece in pieces for w in piece)]
    ours = cli.plain_args(argv)
    if ours is not None:
        assert vars(ours) == _argparse_reads(argv), argv


def test_main_reads_a_plain_line_without_building_a_parser(monkeypatch):
    built = []
    monkeypatch.setattr(cli, "build_parser", lambda command=None: built.append(command))
    ran = []
    monkeypatch.setitem(cli.COMMANDS, "warmup", cli.COMMANDS["warmup"][:3] + (lambda args: ran.append(args) or 0,))
    assert cli.main(["warmup"]) == 0
    assert built == [] and vars(ran[0]) == {"command": "warmup", "func": cli.COMMANDS["warmup"][3]}


# ---------------------------------------------------------------------------------------- precompiled methods
def _shape(code) -> tuple:
    """Everything of a code object that compiling decides (nested code objects included)."""
    consts = tuple(_shape(c) if hasattr(c, "co_code") else (type(c).__name__, repr(c)) for c in code.co_consts)
    return (code.co_name, code.co_qualname, code.co_filename, code.co_firstlineno, code.co_argcount,
            code.co_posonlyargcount, code.co_kwonlyargcount, code.co_flags, code.co_code, consts, code.co_names,
            code.co_varnames, code.co_freevars, code.co_cellvars, code.co_linetable, code.co_exceptiontable)


def test_each_precompiled_method_is_the_one_exec_makes():
    import dataclasses

    from fastcopy.golden import _methods, schema
    from fastcopy.precompiled import precompiled

    assert len(_methods.TABLE) >= 50
    for text in _methods.TABLE:
        made, compiled = {}, {}
        with precompiled(_methods.TABLE) as block:
            dataclasses.exec(text, vars(schema), made)
            assert block._table is _methods.TABLE
        exec(compile(text, "<string>", "exec", dont_inherit=True), vars(schema), compiled)  # (as dataclasses does)
        ours, theirs = made.pop("__create_fn__"), compiled.pop("__create_fn__")
        assert not made and not compiled
        assert _shape(ours.__code__) == _shape(theirs.__code__)
        assert ours.__globals__ is theirs.__globals__ is vars(schema)
        assert (ours.__name__, ours.__qualname__, ours.__module__, ours.__defaults__) == \
            (theirs.__name__, theirs.__qualname__, theirs.__module__, theirs.__defaults__)
    assert "exec" not in vars(dataclasses)


_DUMP = """
import dataclasses, inspect, json, sys, types
dataclasses.MISSING.__class__.__repr__ = lambda self: "MISSING"  # (not its address)
{prelude}
import fastcopy.golden, fastcopy.golden.batch, fastcopy.golden.work, fastcopy.golden.engine, fastcopy.golden.schema

def shape(code):
    consts = [shape(c) if isinstance(c, types.CodeType) else [type(c).__name__, repr(c)] for c in code.co_consts]
    return [code.co_name, code.co_qualname, code.co_filename, code.co_firstlineno, code.co_code.hex(), consts,
            code.co_names, code.co_varnames, code.co_linetable.hex(), code.co_exceptiontable.hex()]

out = {{}}
for mod in [m for n, m in sorted(sys.modules.items()) if n.startswith("fastcopy.golden")]:
    for name, cls in sorted(vars(mod).items()):
        if not (isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == mod.__name__):
            continue
        methods = {{}}
        for k, v in sorted(vars(cls).items()):
            f = getattr(v, "__wrapped__", v)
            if isinstance(f, types.FunctionType) and f.__code__.co_filename == "<string>":
                methods[k] = [shape(f.__code__), f.__qualname__, repr(f.__defaults__), repr(f.__kwdefaults__),
                              repr(f.__annotations__), f.__globals__ is vars(mod)]
        fields = [[f.name, f.type, repr(f.default), repr(f.default_factory), f.init, f.repr, f.hash, f.compare,
                   f.kw_only] for f in dataclasses.fields(cls)]
        out[f"{{mod.__name__}}.{{name}}"] = [str(inspect.signature(cls)), repr(cls.__dataclass_params__), fields,
                                            repr(cls.__match_args__), methods]
print(json.dumps(out))
"""


def test_the_golden_classes_are_those_dataclass_makes_without_the_table():
    # (a stand-in table module with no entries: every method compiled, as without fastcopy.precompiled)
    stub = ("import types\nstub = types.ModuleType('fastcopy.golden._methods')\nstub.TABLE = {}\n"
            "sys.modules['fastcopy.golden._methods'] = stub")
    ours = json.loads(_fresh(_DUMP.format(prelude="")).stdout)
    plain = json.loads(_fresh(_DUMP.format(prelude=stub)).stdout)
    assert len(ours) >= 12 and "fastcopy.golden.schema.Program" in ours
    assert ours == plain
    assert all(len(v[-1]) >= 3 for v in ours.values())  # (__init__, __repr__, __eq__ and more, each compared)


def test_the_table_is_current():
    """``python -m fastcopy.precompiled`` rewrites it (after a change to a dataclass of the golden package)."""
    from fastcopy import precompiled
    from fastcopy.golden import _methods

    texts = precompiled.recorded_texts()
    version = ".".join(map(str, sys.version_info[:2]))
    if _methods.PYTHON == version:  # (another Python writes other texts: they are compiled, as without the table)
        path = pathlib.Path(_methods.__file__)
        assert path.read_text(encoding="utf-8") == precompiled.table_source(texts), \
            "fastcopy/golden/_methods.py is stale: run python -m fastcopy.precompiled"
        assert all(t in _methods.TABLE for t in texts)
    else:
        assert precompiled.table_source(texts).count("TABLE[") == len(set(texts))


def test_a_text_not_in_the_table_is_compiled_and_the_block_leaves_dataclasses_as_it_was():
    import dataclasses

    from fastcopy.precompiled import precompiled

    with precompiled({}):
        @dataclasses.dataclass(frozen=True)
        class Point:
            x: int
            y: int = 2

    assert repr(Point(1)).endswith(".Point(x=1, y=2)") and Point(1) == Point(1, 2) and hash(Point(1)) == hash(Point(1, 2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        Point(1).x = 3
    assert "exec" not in vars(dataclasses)
    with pytest.raises(KeyError):
        with precompiled({}):
            with precompiled({}):
                raise KeyError
    assert "exec" not in vars(dataclasses)


# ---------------------------------------------------------------------------------------- frame-stack chunks
def test_numpy_is_imported_first_from_the_package_top():
    """CPython 3.11 unmaps a 16 KiB frame-stack chunk as soon as the call that opened it returns: numpy's import,
    run from deep inside ours (apidoc -> dtypes -> ml_dtypes' extension module), crossed a chunk boundary ~300 times
    in ``python -m fastcopy batch`` (~15 ms). fastcopy/__init__.py imports numpy before its own modules; whether a
    path thrashes depends on the depth of every call on it, so ``strace -c -e trace=munmap python -m fastcopy
    batch ...`` is the check (1 unmapped 16 KiB chunk now, 285 before); this keeps the order."""
    code = ("import json, sys\nasked = []\n"  # (the order imports start in: a finder that finds nothing)
            "class Finder:\n    def find_spec(self, name, path=None, target=None):\n        asked.append(name)\n"
            "sys.meta_path.insert(0, Finder())\nimport fastcopy\nprint(json.dumps(asked))")
    asked = json.loads(_fresh(code).stdout)
    before = [m for m in asked[:asked.index("numpy")] if m.startswith(("fastcopy.", "ml_dtypes"))]
    assert before == ["fastcopy.lazy"], before  # (the collector's pause comes first)
    assert "fastcopy.dtypes" in asked and "ml_dtypes" in asked
