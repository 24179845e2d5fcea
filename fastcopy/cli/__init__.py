"""The ``fastcopy`` command: ``run``, ``batch``, ``verify``, ``demo``, ``warmup``, ``explain``.

Exit status: 0 success; 1 a case failed or the data differ; 2 a usage error (argparse).

The commands' options are data (:data:`COMMANDS`): :func:`build_parser` makes argparse's parser of them
(:mod:`fastcopy.cli.parser`), and :func:`main` reads a command line written out plainly (every option spelled in
full, each value its own argument) straight from the same data (:func:`plain_args`) without importing argparse;
every other command line, ``--help`` and every error go to argparse.
"""

from __future__ import annotations

import sys


def _run(args) -> int:
    from .run import main_run

    return main_run(args)


def _batch(args) -> int:
    from .batch import main_batch

    return main_batch(args)


def _check(args) -> int:
    from .check import main_check

    return main_check(args)


def _verify(args) -> int:
    from .verify import main_verify

    return main_verify(args)


def _demo(args) -> int:
    from .demo import run_demo

    return run_demo(args.output)


def _warmup(args) -> int:
    from .warmup import warmup

    return warmup(verbose=True)


def _type_error(message: str):
    import argparse

    return argparse.ArgumentTypeError(message)


def _seed(text: str) -> int:
    try:
        v = int(text, 0)
    except ValueError:
        raise _type_error(f"{text!r} is not an integer") from None
    if v < 0:
        raise _type_error("a seed is a non-negative integer")
    return v


def _tolerance(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise _type_error(f"{text!r} is not a number") from None
    if not v >= 0 or v == float("inf"):
        raise _type_error(f"{text!r}: a tolerance is a finite number >= 0")
    return v


def _max_bytes(text: str) -> int:
    """``1000000``, ``512M``, ``2G``, ``1.5GiB`` -> bytes."""
    import re

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)(?:i?[bB])?\s*", text)
    if not m:
        raise _type_error(f"{text!r} is not a size (e.g. 4000000, 512M, 2G)")
    v = int(float(m.group(1)) * (1 << (10 * " KMGT".index(m.group(2).upper() or " "))))
    if v < 1:
        raise _type_error(f"{text!r}: the limit must be at least 1 byte")
    return v


def _arg(*flags: str, **kwargs) -> tuple:
    """One ``add_argument`` call as data: ``(flags, keyword arguments)``."""
    return flags, kwargs


#: options of the commands that run cases (run, batch, check)
_COMMON = (
    _arg("--strict", action="store_true",
         help="treat warnings (FastCopyWarnings, undeclared undefined output elements) as failures"),
    _arg("--max-bytes", type=_max_bytes, default=None, metavar="SIZE",
         help="largest buffer a case may declare, e.g. 512M or 8G (default: a quarter of this machine's memory)"),
    _arg("--allow-python", action="store_true",
         help="run the cases' compute steps (Python files next to the case files); only for case files you trust"),
    _arg("-q", "--quiet", action="store_true", help="print only errors and warnings"),
    _arg("-v", "--verbose", action="store_true", help="print every warning and every point"),
    _arg("--no-progress", action="store_true", help="no progress bar even on a terminal"),
)

_RUN = (
    _arg("case", help="case file (.toml or .json)"),
    _arg("-o", "--output", default=None, help="folder to write (default: out/<case name>)"),
    _arg("--seed", type=_seed, default=None, help="override the case's seed"),
    _arg("--point", type=int, default=None, help="run only this sweep point"),
    *_COMMON,
)

_BATCH = (
    _arg("cases", nargs="+", help="case files"),
    _arg("-o", "--output", required=True, help="folder to write"),
    _arg("-j", "--jobs", type=int, default=1, help="worker processes (default 1: in this process)"),
    _arg("--seed", type=_seed, default=None, help="override every case's seed"),
    *_COMMON,
    _arg("--resume", action="store_true", help="skip points whose folder is already complete (manifest matching "
         "the case file's hash and the point's parameters)"),
    _arg("--dask", metavar="SCHEDULER", default=None, help="run on a Dask cluster: a scheduler address "
         "(tcp://host:8786) or scheduler file (.json), or local[:N] for N worker processes here; the workers write "
         "DIR themselves (a shared path). Needs the dask extra"),
    _arg("--chunk-size", type=int, default=None, metavar="N", help="sweep points per task (default: chosen from "
         "the number of points and workers)"),
)

_CHECK = (
    _arg("case", help="case file (.toml or .json)"),
    _arg("--point", type=int, default=None, help="check only this sweep point (default: all; the ops of the first "
         "are listed)"),
    _arg("--seed", type=_seed, default=None, help="override the case's seed"),
    *_COMMON,
)

_VERIFY = (
    _arg("output", help="the kernel's output file (raw)"),
    _arg("golden", help="the golden file (raw), or a golden folder (DIR with manifest.json)"),
    _arg("--buffer", default=None, help="which output of a golden folder with several"),
    _arg("--dtype", default=None, help="element type (half, float, int8_t, bfloat16_t, float16, ...)"),
    _arg("--mask", default=None, help="definedness mask file (uint8, 1 = defined)"),
    _arg("--no-mask", action="store_true", help="compare every position"),
    _arg("--shape", nargs="+", default=None, help="shape for ND coordinates, e.g. --shape 32 64"),
    _arg("--rtol", type=_tolerance, default=None, help="relative tolerance (|a - g| <= atol + rtol*|g|)"),
    _arg("--atol", type=_tolerance, default=None, help="absolute tolerance"),
    _arg("--compare", default=None, metavar="RULE",
         help="a named compare rule (exact, allclose, ...; default: the case's, else exact)"),
    _arg("--max-report", type=int, default=10, help="mismatches to list (default 10)"),
)

_DEMO = (_arg("-o", "--output", default=None, help="folder to write into (default: a temporary folder)"),)


def _add_explain(p) -> None:
    from .explain import add_options

    add_options(p)


#: the commands, in the order of the help: name -> (help, description or None, options, function). The options:
#: ``add_argument`` calls as data (:func:`_arg`), or a function adding them to the command's parser (which then
#: sets its ``func`` itself).
COMMANDS = {
    "run": ("run one case file: input/*.bin, output/golden.bin (+ mask), manifest.json",
            "Run a case file (TOML or JSON) and write DIR/input/<name>.bin, DIR/output/golden.bin, "
            "DIR/output/golden.mask.bin (1 = defined) and DIR/manifest.json. Several outputs: DIR/output/<name>.bin "
            "each. A sweep writes DIR/NNNN/ per point.", _RUN, _run),
    "batch": ("run many case files (and their sweeps) with a few worker processes",
              "Run every point of every case file into DIR/<case>/ (DIR/<case>/NNNN/ for sweeps) with a few worker "
              "processes; a summary table at the end, DIR/summary.json, and exit status 1 if any case failed. One "
              "bad case never stops the others.", _BATCH, _batch),
    "check": ("dry run: validate every op, print warnings and the bytes each op reads and writes per buffer; writes "
              "nothing",
              "Load the case and run every point in memory: every op validated, the warnings and (for one point) "
              "each op's bytes read and written per buffer printed. Nothing is written. Exit 0 when valid, 1 "
              "otherwise (or with warnings under --strict).", _CHECK, _check),
    "verify": ("compare a kernel output with golden data (bit-exact, or --rtol/--atol)",
               "Compare OUTPUT with GOLDEN over the defined positions: bit for bit, or within --rtol/--atol (or the "
               "tolerances the case gave the output). GOLDEN is a golden file or a golden folder (its manifest.json "
               "gives dtype, shape, mask and tolerances, and every file must still match its sha256 there); without "
               "--mask, GOLDEN's sibling <name>.mask.bin is used when it exists. Exit status like cmp: 0 equal, 1 "
               "different, 2 trouble (unreadable file, unknown dtype, golden changed since it was written, nothing "
               "to compare).", _VERIFY, _verify),
    "demo": ("run the built-in example case and print what it wrote", None, _DEMO, _demo),
    "warmup": ("compile and cache every kernel", None, (), _warmup),
    "explain": ("draw what one op of a case does (text, or PNG/SVG with matplotlib)",
                "Run a case file up to one op and draw that op: source and destination as element grids, every "
                "destination element coloured (and numbered) by the source element it came from, padding (P), "
                "dummy (d) and undefined (?) elements marked, and the byte spans each buffer uses. Without -o: "
                "coloured text on a terminal. -o FILE.png / .svg needs matplotlib (pip install 'fastcopy[plot]'); "
                "-o FILE.txt writes plain text.", _add_explain, None),
}


def build_parser(command: str | None = None):
    """The ``fastcopy`` parser (an ``argparse.ArgumentParser``). ``command``: add the options of that command only
    (every command still has its name, help and description: all the top-level parser shows or checks).
    :func:`main` passes the first argument when it names a command: argparse then hands every later argument to
    that command's parser alone, so the others' options are never read."""
    from .. import __version__
    from .parser import Parser

    parser = Parser(prog="fastcopy", description="Exact CPU emulation of Ascend C data movement: golden data for "
                    "kernels.")
    parser.add_argument("--version", action="version", version=f"fastcopy {__version__}")
    # (prog: what argparse derives from the usage of a parser without positionals, which formats it to know)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", prog=parser.prog)
    for name, (help_, description, options, func) in COMMANDS.items():
        p = sub.add_parser(name, help=help_, **({} if description is None else {"description": description}))
        if command is None or command == name:
            if callable(options):
                options(p)
                continue
            for flags, kwargs in options:
                p.add_argument(*flags, **kwargs)
            p.set_defaults(func=func)
    return parser


def plain_args(argv: list):
    """The namespace argparse makes of ``argv`` (its attributes, as a ``types.SimpleNamespace``), read without
    argparse when the command line is written out plainly; None otherwise (argparse then reads it, and reports
    what it finds wrong). Plain: the first argument names a command whose options are data; every option is
    spelled in full (no abbreviation, no ``--opt=value``, no ``-qv``), given once, and takes no value or exactly
    one; a value is its own next argument and neither empty nor starting with ``-``; the positionals (non-empty,
    not starting with ``-``) come in one run and are as many as the command takes (one each, or one or more for
    a single ``nargs="+"``); every required option is there and every ``type`` accepts its value. Each such line
    is read by argparse the same way (tests/test_startup.py compares the two on every command and many lines)."""
    import types

    spec = COMMANDS.get(argv[0]) if argv else None
    if spec is None or callable(spec[2]):
        return None
    values = {"command": argv[0], "func": spec[3]}
    options, positionals, required = {}, [], set()
    for flags, kwargs in spec[2]:
        if not flags[0].startswith("-"):
            positionals.append((flags[0], kwargs.get("nargs")))
            continue
        dest = kwargs.get("dest") or next((f for f in flags if f.startswith("--")), flags[0]).lstrip("-").replace(
            "-", "_")  # (argparse's rule: the first long option, else the first)
        action = kwargs.get("action")
        values[dest] = False if action == "store_true" else kwargs.get("default")
        if kwargs.get("required"):
            required.add(dest)
        plain = (action in (None, "store_true") and kwargs.keys() <= {"action", "type", "default", "required",
                                                                      "help", "metavar"})
        for flag in flags:
            options[flag] = (dest, action, kwargs.get("type")) if plain else None
    given, runs, words, last_was_word = set(), 0, [], False
    i = 1
    while i < len(argv):
        a = argv[i]
        if a and a[0] != "-":
            runs += not last_was_word
            words.append(a)
            last_was_word = True
            i += 1
            continue
        option = options.get(a)
        if option is None or option[0] in given:
            return None
        dest, action, convert = option
        given.add(dest)
        last_was_word = False
        if action == "store_true":
            values[dest] = True
            i += 1
            continue
        if i + 1 >= len(argv) or not argv[i + 1] or argv[i + 1][0] == "-":
            return None
        try:
            values[dest] = argv[i + 1] if convert is None else convert(argv[i + 1])
        except Exception:  # noqa: BLE001 - argparse reads the line again and reports it
            return None
        i += 2
    if runs > 1 or not required <= given:
        return None
    if len(positionals) == 1 and positionals[0][1] == "+":
        if not words:
            return None
        values[positionals[0][0]] = words
    elif all(nargs is None for _, nargs in positionals) and len(words) == len(positionals):
        values.update(zip((name for name, _ in positionals), words))
    else:
        return None
    return types.SimpleNamespace(**values)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = plain_args(argv)
    if args is None:
        from ..lazy import paused_collector

        with paused_collector():  # (the parser's objects: made once, kept to the end)
            args = build_parser(argv[0] if argv and argv[0] in COMMANDS else None).parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # `fastcopy check CASE | head`: the reader went away
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def entry() -> int:
    """The ``fastcopy`` command as a process runs it (the console script and ``python -m fastcopy``): :func:`main`,
    then the process ends through :func:`end_process` (its exit made shorter; a command that raised, argparse's
    usage errors and ``--help`` included, leaves through the interpreter's exit after :func:`before_exit`). Call
    :func:`main` to run a command inside a process that goes on."""
    try:
        status = main()
    except BaseException:
        before_exit()
        raise
    return end_process(status)


def before_exit() -> None:
    """Leave the objects alive at the end of the command out of the cyclic collector's passes at interpreter exit
    (``gc.freeze``): those passes walk every object of numpy and fastcopy again and found nothing to free, ~13 ms
    of a ~0.15 s one-point batch. Exit handlers, flushes and finalizers run as usual; only objects in reference
    cycles stay unfreed, as memory the exiting process gives back whole."""
    import gc

    gc.freeze()


def end_process(status: int) -> int:
    """End the process with exit status ``status`` after the steps of the interpreter's own exit that anyone can
    see, in its order: non-daemon threads joined and the threading exit hooks run (``threading._shutdown``: e.g.
    ``concurrent.futures``' workers), the ``atexit`` handlers (``weakref.finalize``, ``multiprocessing``,
    ``logging``, ``tempfile``, coverage tools), ``sys.stdout`` / ``sys.stderr`` flushed, then the C library's
    streams (``fflush``). What is left out is the teardown: every module emptied and every object freed one by one
    (~5 ms after a batch; Python does not promise to call ``__del__`` of objects alive at exit), which the kernel
    does at once. If a flush fails (a closed pipe), the interpreter's exit takes over and reports it as it always
    did (the return value is then ``status``)."""
    import atexit
    import os

    before_exit()
    threading = sys.modules.get("threading")
    shutdown = getattr(threading, "_shutdown", None) if threading is not None else None
    if threading is not None and shutdown is None:  # (another Python: its own exit, which knows its threads)
        return status
    try:
        if shutdown is not None:
            shutdown()
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except Exception:  # noqa: BLE001 - the interpreter's exit finishes the job and reports it, with its own status
        return status
    _flush_c_streams()
    os._exit(status)


def _flush_c_streams() -> None:
    """``fflush(NULL)``: what the C library's ``exit`` does for output a C extension buffered (``os._exit`` does
    not)."""
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except (ImportError, OSError, AttributeError):  # (no C library to ask: nothing buffered by it either)
        pass


if __name__ == "__main__":
    sys.exit(entry())
