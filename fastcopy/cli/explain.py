"""``fastcopy explain CASE [--op N] [-o FILE]``: a picture of what one op of a case does."""

from __future__ import annotations

import sys


def add_options(p) -> None:
    """The options of ``fastcopy explain`` (its help and description: fastcopy.cli.COMMANDS)."""
    p.add_argument("case", help="case file (.toml or .json)")
    p.add_argument("--op", type=int, default=None, help="op number in execution order (loops unrolled, cores in "
                   "turn, as fastcopy check lists them; default: the first op that moves data)")
    p.add_argument("--point", type=int, default=0, help="sweep point (default 0)")
    p.add_argument("-o", "--output", default=None, help="write FILE.png, FILE.svg or FILE.txt instead of printing")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="ANSI colours in text "
                   "output (default: when stdout is a terminal)")
    p.add_argument("--max-rows", type=int, default=None, help="grid rows drawn per tensor (default 48)")
    p.set_defaults(func=main_explain)


def main_explain(args) -> int:
    from ..errors import FastCopyError
    from ..explain.case import explain_case
    from ..golden import CaseError

    try:
        ex = explain_case(args.case, args.op, args.point, args.max_rows)
        if args.output:
            ex.save(args.output)
            print(f"fastcopy explain: wrote {args.output} ({ex.call})")
        else:
            color = {"always": True, "never": False}.get(args.color, sys.stdout.isatty())
            print(ex.text(color=color))
    except (CaseError, FastCopyError) as exc:
        text = str(exc)
        print(f"fastcopy {text}" if text.startswith("explain: ") else f"fastcopy explain: {text}", file=sys.stderr)
        return 1
    return 0
