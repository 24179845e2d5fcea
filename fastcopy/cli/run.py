"""``fastcopy run CASE -o DIR``: one case file (every sweep point, or ``--point``) into a golden folder."""

from __future__ import annotations

import json
import os
import sys


def describe_files(directory: str, manifest: dict) -> list:
    """One line per written file: path, dtype[shape], bytes, sha256 prefix, definedness."""
    rows = []
    for b in manifest["buffers"]:
        if "file" not in b:
            continue
        shape = ", ".join(map(str, b["shape"]))
        extra = f"{b['defined']}/{b['elements']} defined" if b["role"] == "output" else ""
        rows.append((b["file"], f"{b['dtype']}[{shape}]", f"{b['bytes']} B", f"sha256 {b['sha256'][:12]}", extra))
        if b["role"] == "output":
            rows.append((b["mask"], f"uint8[{shape}]", f"{b['elements']} B", "1 = defined", ""))
    rows.append(("manifest.json", "", "", "", ""))
    widths = [max(len(r[c]) for r in rows) for c in range(5)]
    return ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def load_points(args, command: str):
    """(case, point indices) for ``run`` / ``check`` (all points, or ``--point``); (None, None) after printing
    the error."""
    from ..golden import CaseError, load_case

    try:
        case = load_case(args.case, seed=args.seed, max_bytes=args.max_bytes, allow_python=args.allow_python)
    except CaseError as exc:
        print(f"fastcopy {command}: {exc}", file=sys.stderr)
        return None, None
    if args.point is not None and not 0 <= args.point < len(case):
        print(f"fastcopy {command}: {args.case}: --point {args.point} outside [0, {len(case)})", file=sys.stderr)
        return None, None
    return case, (range(len(case)) if args.point is None else [args.point])


def main_run(args) -> int:
    from ..golden import CaseError
    from ..golden.batch import run_point
    from ..golden.store import safe_component
    from .progress import progress_for

    case, indices = load_points(args, "run")
    if case is None:
        return 1
    out = args.output or os.path.join("out", safe_component(case.name))
    width = max(4, len(str(len(case) - 1)))
    failed = 0
    many = len(indices) > 20 and not args.verbose
    if not args.quiet:
        try:
            head = case.point(indices[0])
        except CaseError:
            head = None  # reported with the point below
        sweep = f", {len(case)} sweep points" if case.is_sweep else ""
        if head is not None:
            from ..products import Product

            print(f"fastcopy run: {case.name} ({Product.get(head.product).display_name}, seed {head.seed} "
                  f"({head.seed_source}){sweep}) -> {out}")
    bar = progress_for(args) if many else None
    done = 0
    try:
        for i in indices:
            where = os.path.join(out, f"{i:0{width}d}") if case.is_sweep else out
            o = run_point(case, i, where, args.strict)
            done += 1
            if not o.ok:
                failed += 1
                print(f"fastcopy run: {o.error}", file=sys.stderr)
            elif not (args.quiet or many):
                with open(os.path.join(where, "manifest.json"), encoding="utf-8") as fh:
                    manifest = json.load(fh)
                if case.is_sweep:
                    print(f" {os.path.relpath(where, out)}: {o.label}")
                print("\n".join(describe_files(where, manifest)))
            if o.ok and (not many or args.verbose):
                for w in o.warnings:
                    print(f"  warning {o.label if case.is_sweep else ''}{': ' if case.is_sweep else ''}{w}",
                          file=sys.stderr)
            if bar is not None:
                bar(done, len(indices), failed)
    except KeyboardInterrupt:
        if bar is not None:
            bar.close()
        print(f"fastcopy run: interrupted: {done - failed} of {len(indices)} point(s) written to {out}, "
              f"{failed} failed, {len(indices) - done} not run (every folder with a manifest.json is complete)",
              file=sys.stderr)
        return 130
    if bar is not None:
        bar.close()
    if many and not args.quiet:
        print(f"  {len(indices) - failed} of {len(indices)} points written to {out}/NNNN/")
    if failed:
        print(f"fastcopy run: {failed} of {len(indices)} point(s) failed", file=sys.stderr)
    return 1 if failed else 0
