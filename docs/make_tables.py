"""Rewrite the generated tables of docs/semantics.md (paths, element types, positions, capacities, alignment)
from fastcopy/products.py. Run from the repository root: ``python docs/make_tables.py``. The tests fail when the
file is not current."""

import sys

from fastcopy.apidoc import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
