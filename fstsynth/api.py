"""The top-level Python API: learn a model from word pairs, load one, use it.

Public API (also reachable as `fstsynth.learn`, `fstsynth.load`, `fstsynth.Model`):
    learn(pairs, *, features=None, variant="auto", time_limit=None, alignment="global", jobs=1) -> Model
    load(path) -> Model
    Model, PairModel: the model values of `fstsynth.model`, and what a user calls on
    them: .apply(word), .apply_many(words), .rules, .fst, .pair(source, target),
    .evaluate(pairs), and Model.save(path)

`pairs` is a path to a TSV or problem file, or an iterable of (source, target) words,
each a string (tokens separated by spaces; a word without spaces is split into
characters, as a TSV's words are) or a sequence of tokens. `features` is a path to a
features file or a dict token -> {feature: true/false}. The command line calls these
same functions.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence, cast

from fstsynth import model as records
from fstsynth.errors import UserError
from fstsynth.evaluation import evaluate_pairs
from fstsynth.learning import learn_model
from fstsynth.model_file import save_model
from fstsynth.problem import load_features, nfc, read_pairs, with_features
from fstsynth.synthesis import Options


class PairModel(records.PairModel):
    """A column pair's model as a library user holds it (`Model.pair`)."""

    def evaluate(self, pairs: Any, *, errors: int | None = None) -> dict[str, Any]:
        """Scores on gold (source, target) pairs (or a TSV/problem file): the figures of
        `fstsynth evaluate` (`evaluation.Evaluation.to_json`); `errors=N` keeps the first
        N mistakes."""
        return evaluate_pairs(self, pairs, max_errors=errors).to_json()


class Model(records.Model):
    """A model as a library user holds it: `fstsynth.model.Model`, whose pairs are
    `PairModel`s, and which saves itself."""

    @classmethod
    def of(cls, model: records.Model) -> "Model":
        """The same model, with the user's methods."""
        return _same_as(cls, model, pairs={key: _same_as(PairModel, pm) for key, pm in model.pairs.items()})

    def pair(self, source: int | str | None = None, target: int | str | None = None) -> PairModel:
        return cast(PairModel, super().pair(source, target))

    def only_pair(self) -> PairModel:
        return cast(PairModel, super().only_pair())

    def evaluate(self, pairs: Any, *, errors: int | None = None) -> dict[str, Any]:
        """`PairModel.evaluate` with the model's column pair."""
        return self.only_pair().evaluate(pairs, errors=errors)

    def save(self, directory: str | Path) -> None:
        """Write the model directory (as `fstsynth learn -o` does), atomically."""
        save_model(self, directory)


def _same_as(cls: type, value: Any, **changes: Any) -> Any:
    """`value` (a dataclass instance) as an instance of its subclass `cls`, with `changes`."""
    return cls(**{f.name: getattr(value, f.name) for f in dataclasses.fields(value)} | changes)


def options(variant: str = Options().variant, time_limit: float | None = None, alignment: str = "global") -> Options:
    """Learning options, checked (a bad value is a `UserError` naming it)."""
    if time_limit is not None and not time_limit > 0:
        raise UserError(f"time limit must be a positive number of seconds, not {time_limit}")
    return Options(variant=variant, time_limit=time_limit, alignment=alignment)


def _features(features: str | Path | Mapping[str, Mapping[str, bool]]) -> tuple[dict, str]:
    if isinstance(features, (str, Path)):
        return load_features(features), str(features)
    table = {nfc(tok): {nfc(k): bool(v) for k, v in f.items()} for tok, f in features.items()}
    return table, "features"


def learn(
    pairs: str | Path | Iterable[Sequence[str]],
    *,
    features: str | Path | Mapping[str, Mapping[str, bool]] | None = None,
    variant: str = Options().variant,
    time_limit: float | None = None,
    alignment: str = "global",
    jobs: int = 1,
) -> Model:
    """Learn and compile a program for every column pair of `pairs` (see the module doc).

    `variant`: "auto" (the default: per column pair, the one that cross-validates best),
    "token", "feature" or "nofeature". `time_limit`: seconds allowed per column pair.
    `jobs`: worker processes for the cross-validation (the same model, sooner)."""
    chosen = options(variant, time_limit, alignment)
    problem = read_pairs(pairs)
    if features is not None:
        table, where = _features(features)
        problem = with_features(problem, table, where)
    return Model.of(learn_model(problem, chosen, jobs=jobs))


def load(path: str | Path) -> Model:
    """A model directory written by `Model.save` or `fstsynth learn`. It pickles as
    its files' bytes (`fstsynth.cluster.ShippedModel`), so Dask can ship it to workers,
    and has `apply_partition` for a `dask.bag`."""
    from fstsynth.cluster import load as load_shipped

    return load_shipped(path)


__all__ = ["Model", "PairModel", "learn", "load", "options"]
