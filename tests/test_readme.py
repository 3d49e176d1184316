"""The README's Python session runs as written (a doctest, from the project's directory)."""

from __future__ import annotations

import doctest

from conftest import ROOT


def test_readme_python_session(monkeypatch):
    monkeypatch.chdir(ROOT)
    result = doctest.testfile(
        str(ROOT / "README.md"), module_relative=False, optionflags=doctest.ELLIPSIS, verbose=False
    )
    assert result.attempted >= 10, "the README lost its Python session"
    assert result.failed == 0, f"{result.failed} of {result.attempted} README examples failed (see above)"
