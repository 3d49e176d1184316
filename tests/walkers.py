"""The optional compiled walker (`fstsynth._walk`) for tests.

`compiled_walker(tables, seen)` skips the calling test where the extension is not built
(no C compiler when the package was installed); with FSTSYNTH_REQUIRE_TOOLS=1 (set by
`.ci/run`, whose machine has one) it fails instead, so CI cannot silently test only
the numpy walker.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import pytest

from fstsynth.tables import Tables


def compiled_walker(tables: Tables, seen: Sequence[bool]) -> Any:
    """`tables.compiled(seen)`, or a skip (a failure in CI) where it is not built."""
    walker = tables.compiled(seen)
    if walker is not None:
        return walker
    message = (
        "the compiled walker fstsynth._walk is not built (an optional C extension), or was "
        "built before fstsynth/_walk.c last changed (run `pip install -e .` again)"
    )
    if os.environ.get("FSTSYNTH_REQUIRE_TOOLS") == "1":
        pytest.fail(f"FSTSYNTH_REQUIRE_TOOLS=1 but {message}")
    pytest.skip(message)


def batch_walkers(tables: Tables) -> list[str]:
    """The batch walkers `tables.outputs` can run here: numpy's, and the compiled one
    where it is built (where it is not: a failure in CI, as `compiled_walker`)."""
    if tables.compiled([True] * len(tables.tokens)) is not None:
        return ["numpy", "compiled"]
    if os.environ.get("FSTSYNTH_REQUIRE_TOOLS") == "1":
        pytest.fail("FSTSYNTH_REQUIRE_TOOLS=1 but the compiled walker fstsynth._walk is not built")
    return ["numpy"]
