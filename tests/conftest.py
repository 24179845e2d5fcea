import os
import pathlib
import sys

from hypothesis import settings

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

# CI runs a fixed, reproducible set of examples (a red CI run can be replayed exactly); developers' runs keep
# exploring new random examples.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
