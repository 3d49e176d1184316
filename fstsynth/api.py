"""The top-level Python API: learn a model from word pairs, load one, use it.

Public API (also reachable as `fstsynth.learn`, `fstsynth.load`, `fstsynth.Model`):
    learn(pairs, *, features=None, variant="auto", time_limit=None, alignment="global", jobs=1) -> Model
    load(path) -> Model
    compile(rules, *, features=None, data=None, time_limit=None) -> Model
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

from fstsynth import dsl
from fstsynth import model as records
from fstsynth.errors import UserError
from fstsynth.evaluation import evaluate_pairs
from fstsynth.learning import compile_model, learn_model
from fstsynth.model_file import load_model, save_model
from fstsynth.problem import Problem, load_features, nfc, read_pairs, with_features
from fstsynth.rules_text import PairRules, parse_rules
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
    """`value` (a `model` record) as an instance of its subclass `cls`, with `changes`."""
    return cls(**{name: getattr(value, name) for name in value.FIELDS} | changes)


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
    """A model directory written by `Model.save` or `fstsynth learn`. (`fstsynth.load`
    is `fstsynth.cluster.load`: the same model, which also pickles as its files' bytes,
    for Dask.)"""
    return Model.of(load_model(path))


def compile(
    rules: str | Path | dsl.Program,
    *,
    features: str | Path | Mapping[str, Mapping[str, bool]] | None = None,
    data: str | Path | Iterable[Sequence[str]] | None = None,
    time_limit: float | None = None,
) -> Model:
    """A model of written rules, compiled as `learn` compiles learned ones.

    `rules`: the text `fstsynth show` prints (edited, or written by hand: see
    `fstsynth.rules_text`), a path to a file of it, or a `dsl.Program`. `features`: as
    for `learn`. `data`: words as for `learn`'s `pairs` (a TSV or problem file, or
    pairs); their tokens and features are the model's too, as a model learned from them
    has, and its rows are kept, as a learned model keeps its training rows (`report`).
    Without `data`, the model knows the tokens the rules and the features name; others
    are read as unseen. Each header `SOURCE -> TARGET` names a column pair (of `data`,
    or of the model's own columns without `data`); a text without header is the pair
    source -> target. `time_limit`: seconds allowed per column pair's compilation."""
    if time_limit is not None and not time_limit > 0:
        raise UserError(f"time limit must be a positive number of seconds, not {time_limit}")
    if isinstance(rules, dsl.Program):
        written = [PairRules(None, None, rules)]
        name = "rules"
    elif isinstance(rules, Path):
        try:
            text = rules.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"{rules}: cannot read the rules: {getattr(exc, 'strerror', None) or exc}") from None
        written, name = parse_rules(text, str(rules)), rules.stem
    else:
        written, name = parse_rules(rules), "rules"
    if data is not None:
        problem = read_pairs(data, "data")
    else:
        columns = [c for pair in written for c in (pair.source, pair.target) if c is not None]
        problem = Problem(
            name, tuple(dict.fromkeys(columns)) or ("source", "target"), (), (), directed=not columns,
            source=rules if isinstance(rules, Path) else None,
        )
    if features is not None:
        table, where = _features(features)
        if problem.cells:  # checked against the words' tokens
            problem = with_features(problem, table, where)
        else:
            problem = dataclasses.replace(problem, features=table)
    programs = {_columns(pair, problem): pair.program for pair in written}
    if len(programs) < len(written):
        raise UserError(f"{name}: a column pair is written twice")
    return Model.of(compile_model(programs, problem, time_limit=time_limit))


def _columns(pair: PairRules, problem: Problem) -> tuple[int, int]:
    """The column pair a program is written for, in `problem`'s columns."""
    if pair.source is None or pair.target is None:
        if len(problem.columns) != 2 and not problem.directed:
            raise UserError(
                f"{problem.source or problem.name}: {len(problem.columns)} columns: name the column pair "
                "of the rules with a header line `SOURCE -> TARGET`"
            )
        return 0, 1
    found = []
    for column in (pair.source, pair.target):
        if column not in problem.columns:
            raise UserError(
                f"{problem.source or problem.name}: no column {column!r} (the rules' header "
                f"`{pair.source} -> {pair.target}`); columns: {', '.join(problem.columns)}"
            )
        found.append(problem.columns.index(column))
    return found[0], found[1]


__all__ = ["Model", "PairModel", "compile", "learn", "load", "options"]
