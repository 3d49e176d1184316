"""fstsynth: learn phonological rules from word pairs and compile them into transducers.

    >>> import fstsynth
    >>> model = fstsynth.learn([("k a t", "k a t s"), ...])      # doctest: +SKIP
    >>> model.apply("d ɔ g")                                     # doctest: +SKIP

Public API (README "Library"): `learn`, `compile`, `Model` (from `fstsynth.api`) and
`load` (from `fstsynth.cluster`: `api.load`'s model, which also pickles for Dask). They
are imported on first use, so that `import fstsynth` stays cheap (the learner and the
compiler pull in lingpy and Pynini).
"""

# Only `sys` may be imported here (not typing, not even __future__): `python -m fstsynth`
# runs this before `main` installs its Ctrl-C handler, and a Ctrl-C while typing was
# being imported ended in a traceback.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["learn", "load", "compile", "Model"]


def __getattr__(name: str) -> "Any":
    if name == "load":
        # A loaded model that also pickles as its files' bytes (Dask ships it so);
        # `fstsynth.cluster` sits above the API, which it extends.
        from fstsynth import cluster

        return cluster.load
    if name in __all__:
        from fstsynth import api

        return getattr(api, name)
    raise AttributeError(f"module 'fstsynth' has no attribute {name!r}")
