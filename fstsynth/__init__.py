"""fstsynth: learn phonological rules from word pairs and compile them into transducers.

    >>> import fstsynth
    >>> model = fstsynth.learn([("k a t", "k a t s"), ...])      # doctest: +SKIP
    >>> model.apply("d ɔ g")                                     # doctest: +SKIP

Public API (README "Library"): `learn`, `load`, `compile`, `Model` (from `fstsynth.api`). They are
imported on first use, so that `import fstsynth` stays cheap (the learner and the
compiler pull in lingpy and Pynini).
"""

from __future__ import annotations

from typing import Any

__all__ = ["learn", "load", "compile", "Model"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from fstsynth import api

        return getattr(api, name)
    raise AttributeError(f"module 'fstsynth' has no attribute {name!r}")
