"""The ``fastcopy`` command: ``demo``, ``warmup`` (and more subcommands as they land)."""

from __future__ import annotations

import argparse
import sys


def _demo(args) -> int:
    from .demo import run_demo

    return run_demo(args.output)


def _warmup(args) -> int:
    from .warmup import warmup

    return warmup(verbose=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fastcopy", description="Exact CPU emulation of Ascend C data movement.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help="run the built-in example and print what it wrote")
    p.add_argument("-o", "--output", default=None, help="folder to write into (default: a temporary folder)")
    p.set_defaults(func=_demo)
    p = sub.add_parser("warmup", help="compile and cache every kernel")
    p.set_defaults(func=_warmup)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
