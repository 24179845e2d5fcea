"""The README's Python example runs as written."""

import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert blocks
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})
    assert capsys.readouterr().out.strip().splitlines()[0] == "256"


def test_readme_error_messages_are_real():
    """Every error line quoted in the README is what fastcopy says (the calls that produce them are here)."""
    import numpy as np

    from fastcopy import (DataCopy, DataCopyParams, FastCopyError, FastCopyWarning, GlobalTensor, Nd2NzParams,
                          TPipe, TPosition)

    said = []

    def record(f):
        try:
            f()
        except FastCopyError as exc:
            said.append(f"{type(exc).__name__}: {exc}")

    a2, p350 = TPipe(product="ATLAS_A2"), TPipe(product="ATLAS_350")
    gm = GlobalTensor(np.zeros(1 << 20, np.float16))
    record(lambda: DataCopyParams(70000, 1))
    record(lambda: DataCopy(a2.alloc(TPosition.A1, "half", 1024), gm, Nd2NzParams(1, 20000, 32, 0, 32, 32, 1, 0)))
    record(lambda: DataCopy(p350.alloc(TPosition.A1, "half", 1024), gm, Nd2NzParams(1, 1, 70000, 0, 70000, 1, 1, 0)))
    record(lambda: DataCopy(GlobalTensor(np.zeros(256, np.float16)), p350.alloc(TPosition.A1, "half", 256), 256))
    record(lambda: DataCopy(a2.alloc(TPosition.VECOUT, "half", 64), gm, DataCopyParams(1, 5)))
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DataCopy(a2.alloc(TPosition.VECIN, "half", 64), gm, 20)
    said += [f"FastCopyWarning: {w.message}" for w in caught if issubclass(w.category, FastCopyWarning)]
    text = README.read_text(encoding="utf-8")
    for line in said:
        assert line in text, line
