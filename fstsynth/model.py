"""Models as values: the programs learned for the column pairs of a problem, with the
apply tables and transducers compiled from them, and what a model does with a word.

Public API:
    PairModel, Model, StoredTransducers, StoredProgram, Error, ModelChangedError, far_key, restore_unknown
    Model.pair(source, target), Model.training_pairs(pair_model), Model.pair_names(),
    PairModel.predict(word), PairModel.predict_many(words),
    PairModel.predict_texts(words, sep), PairModel.interpret(word, features),
    PairModel.features_of_unseen(tokens), PairModel.reading(word),
    PairModel.transducers(), PairModel.unbuilt, PairModel.transduce(word), PairModel.program
    For a user (README "Library"; `Model` forwards them to its only column pair):
    .rules, .fst, .apply(word), .apply_many(words)

This module knows no file format and no learner: `fstsynth.model_file` saves and
loads models, `fstsynth.learning` learns them, `fstsynth.api` adds what a library user
calls on top (`save`, `evaluate`). A model read from disk has its transducers in the
model's FAR, read when first needed (`StoredTransducers`; none for a pair whose
transducers were too large to build: `PairModel.unbuilt`), and its programs as their
checked JSON documents, read into DSL nodes when first needed (`StoredProgram`):
`apply` reads the tables alone, and imports neither the DSL nor Pynini.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Protocol, Sequence, TypeVar, runtime_checkable

from fstsynth.errors import UserError
from fstsynth.tables import UNK, Outputs, Tables
from fstsynth.tables import Error as TablesError
from fstsynth.types import Features, Token, Word

if TYPE_CHECKING:
    import pynini

    from fstsynth import dsl

    from fstsynth.transducers import Transducers


class Error(UserError):
    """A model file is missing, damaged, or of an unsupported version; or a bad pair."""


class ModelChangedError(Error):
    """The model directory was replaced while it was being read, again and again."""


def far_key(source: int, target: int) -> str:
    return f"pair-{source}-{target}"


@runtime_checkable
class StoredTransducers(Protocol):
    """A pair's transducers kept in a file, read when first needed (a model read from
    disk: `fstsynth.model_file.FarStages`), or never built
    (`transducers.UnbuiltTransducers`, whose `load` raises `StageTooLargeError`)."""

    @property
    def reason(self) -> str | None:
        """Why the transducers were not built (a stage past `compiler.MAX_STAGE_ARCS`
        arcs); None: they are stored."""

    def load(self) -> "Transducers": ...


_Self = TypeVar("_Self", bound="_Record")


class _Record:
    """An immutable record of named fields (`FIELDS`), compared by identity;
    `replace(**changes)` gives a copy with some changed. (Not a frozen dataclass:
    importing `dataclasses`, which brings `inspect`, `ast` and `dis`, was an eighth of a
    one-word `apply`, before its worker processes can start.)"""

    FIELDS: ClassVar[tuple[str, ...]] = ()
    #: Fields left out of `repr` (large values).
    UNPRINTED: ClassVar[tuple[str, ...]] = ()

    def _set(self, **values: Any) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot set {name!r} (use replace)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot delete {name!r}")

    def replace(self: _Self, **changes: Any) -> _Self:
        """A copy with `changes`; the same type (a subclass's too)."""
        unknown = set(changes) - set(self.FIELDS)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(sorted(unknown))}")
        return type(self)(**{name: getattr(self, name) for name in self.FIELDS} | changes)

    def __repr__(self) -> str:
        shown = (f"{name}={getattr(self, name)!r}" for name in self.FIELDS if name not in self.UNPRINTED)
        return f"{type(self).__name__}({', '.join(shown)})"


class StoredProgram:
    """A program as a model file keeps it: its JSON document, checked when the model was
    read (`program_json.check_program`), read into DSL nodes when first asked for.
    (Importing `fstsynth.dsl`, whose node classes are dataclasses made at import, was a
    quarter of a one-word `apply`, which runs the tables and never the program.)"""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self._program: "dsl.Program | None" = None

    def load(self) -> "dsl.Program":
        if self._program is None:
            from fstsynth import dsl

            self._program = dsl.from_json(self.document)
        return self._program


class PairModel(_Record):
    """The model of one column pair: its program (or where it is kept:
    `StoredProgram`), the apply tables compiled from it, and its transducers (built
    with it, or where to read them: `StoredTransducers`)."""

    FIELDS: ClassVar[tuple[str, ...]] = (
        "source", "target", "program_or_stored", "cost", "train_correct", "train_total", "tables", "stages",
        "seconds", "held_out", "variant", "alphabet", "features", "sampled", "cv_sample",
    )
    source: int
    target: int
    program_or_stored: "dsl.Program | StoredProgram"
    cost: float
    train_correct: int
    train_total: int
    tables: Tables
    stages: "Transducers | StoredTransducers"
    seconds: dict[str, float]
    # Cross-validated share of training rows predicted right (None: not measured); the
    # variant that learned the program (`auto` picks one per pair).
    held_out: float | None
    variant: str
    # The model's token inventory and features (shared by its pairs), which reading a
    # typed word and running the interpreter need.
    alphabet: tuple[Token, ...]
    features: Features
    # The training rows the program was synthesized from, when a sample of them
    # (`synthesis.variant.fit`; not saved); None: all.
    sampled: int | None
    # `synthesis.variant.LearnResult.cv_sample` (not saved).
    cv_sample: tuple[int, int, int] | None

    def __init__(
        self, source: int, target: int, program_or_stored: "dsl.Program | StoredProgram", cost: float,
        train_correct: int, train_total: int, tables: Tables, stages: "Transducers | StoredTransducers",
        seconds: dict[str, float] | None = None, held_out: float | None = None, variant: str = "",
        alphabet: tuple[Token, ...] = (), features: Features | None = None, sampled: int | None = None,
        cv_sample: tuple[int, int, int] | None = None,
    ) -> None:
        self._set(
            source=source, target=target, program_or_stored=program_or_stored, cost=cost,
            train_correct=train_correct, train_total=train_total, tables=tables, stages=stages,
            seconds={} if seconds is None else seconds, held_out=held_out, variant=variant, alphabet=alphabet,
            features={} if features is None else features, sampled=sampled, cv_sample=cv_sample,
        )

    @property
    def far_key(self) -> str:
        return far_key(self.source, self.target)

    @property
    def program(self) -> "dsl.Program":
        """The pair's program (read into DSL nodes the first time, for a model read
        from disk)."""
        if isinstance(self.program_or_stored, StoredProgram):
            return self.program_or_stored.load()
        return self.program_or_stored

    @property
    def unbuilt(self) -> str | None:
        """Why the pair's transducers were not built (a stage past
        `compiler.MAX_STAGE_ARCS` arcs), or None if they were. Applying needs only the
        tables; exports and the reference path need the transducers."""
        return self.stages.reason if isinstance(self.stages, StoredTransducers) else None

    def transducers(self, name: str | None = None) -> "Transducers":
        """The pair's transducers (read from the model's FAR the first time);
        `transducers.StageTooLargeError` naming the pair (by `name`, default its FAR
        key) if they were not built."""
        if self.unbuilt is not None:
            from fstsynth.transducers import StageTooLargeError

            raise StageTooLargeError(f"{name or self.far_key}: {self.unbuilt}")
        if isinstance(self.stages, StoredTransducers):
            return self.stages.load()
        return self.stages

    def map_unknown(self, word: Sequence[Token]) -> Word:
        """The word as the model reads it: unseen tokens become `UNK`."""
        index = self.tables.index
        return tuple(t if t in index else UNK for t in word)

    def features_of_unseen(
        self, tokens: Iterable[Token], features: Features | None = None
    ) -> dict[Token, dict[str, bool]] | None:
        """The features the model (with `features`, default its own) reads `tokens`
        (never seen in training) by, or None if some of them has none: where the
        model's features were derived from IPA, each one's IPA features
        (`features.read_by_ipa`)."""
        from fstsynth.features import read_by_ipa

        return read_by_ipa(tokens, self.features if features is None else features)

    def reading(self, word: Sequence[Token], features: Features | None = None) -> tuple[Word, Features]:
        """The word as the model reads it, and the features to read it with (`features`,
        default the model's). If every token of the word the model never saw has
        features (`features_of_unseen`), the word as it is and the features extended by
        theirs (`features.WithUnseen`): the interpreter reads those tokens by their
        features. Else unseen tokens become `UNK` (`map_unknown`)."""
        base = self.features if features is None else features
        index = self.tables.index
        unseen = {t for t in word if t not in index}
        # A word that holds `UNK` itself is read the old way: its output cannot tell the
        # token from an unseen one read as `UNK` (the interpreter and the tables would part).
        if not unseen or UNK in word:
            return self.map_unknown(word), base
        found = self.features_of_unseen(unseen, base)
        if found is None:
            return self.map_unknown(word), base
        return tuple(word), _with_unseen(base, found)

    def _finish(self, word: Sequence[Token], output: Word) -> Word:
        """The prediction for a word with tokens the model never saw, from the apply
        tables' `output` (which read them as `UNK`): the interpreter's, reading them by
        their features, when they all have some (`reading`), else `restore_unknown`'s."""
        read, features = self.reading(word)
        if UNK not in read:
            from fstsynth.interpreter import run  # not imported by `apply`: start-up time

            return run(self.program, read, features)
        return restore_unknown(word, read, output)

    def predict(self, word: Sequence[Token]) -> Word:
        """The program's output through the apply tables; unseen tokens are handled as
        in `_finish`."""
        try:
            output = self.tables.apply(word)
        except TablesError as exc:
            raise Error(f"{self.far_key}: {exc} (for {' '.join(word)!r}): the model is damaged") from None
        index = self.tables.index
        if all(t in index for t in word):
            return output
        return self._finish(word, output)

    def predict_many(self, words: Sequence[Sequence[Token]]) -> list[Word]:
        """`predict` for many words at once (batched through numpy)."""
        outputs = self._outputs(words)
        predictions = outputs.words()
        for k in outputs.with_unk:
            predictions[k] = self._finish(words[k], predictions[k])
        return predictions

    def predict_texts(self, words: Sequence[Sequence[Token]], sep: str = " ") -> list[str]:
        """`predict_many`'s outputs as strings, their tokens joined by `sep` (made
        without a tuple per word: what `fstsynth apply` prints)."""
        outputs = self._outputs(words)
        texts = outputs.texts(sep)
        for k in outputs.with_unk:
            start, end = outputs.bounds[k], outputs.bounds[k + 1]
            output = tuple(outputs.tokens[start:end])
            texts[k] = sep.join(self._finish(words[k], output))
        return texts

    def _outputs(self, words: Sequence[Sequence[Token]]) -> Outputs:
        try:
            return self.tables.outputs(words)
        except TablesError as exc:
            raise Error(f"{self.far_key}: {exc}: the model is damaged") from None

    def transduce(self, word: Sequence[Token]) -> Word:
        """The output of the transducers (the reference path; slow: each word is
        composed with each stage). A transducer loaded from someone else's model may not
        be total, or may write labels outside its symbol table: a damaged model."""
        from fstsynth.transducers import Error as TransducerError

        trans = self.transducers()
        mapped = trans.map_unknown(word)
        try:
            output = trans.apply(word)
        except (TransducerError, KeyError):
            raise Error(
                f"transducer {self.far_key!r} gives no valid output for {' '.join(word)!r}: the model is damaged"
            ) from None
        return restore_unknown(word, mapped, output)

    def interpret(self, word: Sequence[Token], features: Features) -> Word:
        """The interpreter's output for the word, read as `reading` reads it."""
        from fstsynth.interpreter import run  # not imported by `apply`: start-up time

        read, extended = self.reading(word, features)
        return restore_unknown(word, read, run(self.program, read, extended))

    # -- the Python API (README "Library"): words as typed in, words as typed out

    @property
    def rules(self) -> dsl.Program:
        """The learned program (prints as its rules, pass by pass)."""
        return self.program

    @property
    def fst(self) -> "pynini.Fst":
        """The pair's transducer: its passes composed into one."""
        return self.transducers().composed()

    def apply(self, word: str | Sequence[Token]) -> str | Word:
        """The prediction for one word: a string gives a string (tokens separated by
        spaces, or run together if the word was typed so), tokens give tokens (in NFC)."""
        return self.apply_many([word])[0]

    def apply_many(self, words: Iterable[str | Sequence[Token]]) -> list:
        """`apply` for many words at once (through the apply tables, batched)."""
        from fstsynth.problem import is_spaced, splitter_for
        from fstsynth.words import nfc

        split = splitter_for(self.alphabet)
        words = list(words)
        # Tokens given as such are compared after NFC too, as a typed word's are.
        tokens = [split(w) if isinstance(w, str) else tuple(nfc(t) for t in w) for w in words]
        out: list[str | Word] = []
        for word, prediction in zip(words, self.predict_many(tokens)):
            if isinstance(word, str):
                out.append((" " if is_spaced(word) else "").join(prediction))
            else:
                out.append(prediction)
        return out


_EXTENDED: dict[tuple[int, frozenset[Token]], tuple[Features, Features]] = {}


def _with_unseen(features: Features, unseen: Features) -> Features:
    """`features.WithUnseen(features, unseen)`, made once per model features and set of
    unseen tokens (so that the interpreter's inventory of it is made once too)."""
    from fstsynth.features import WithUnseen

    key = (id(features), frozenset(unseen))
    known = _EXTENDED.get(key)
    if known is not None and known[0] is features:
        return known[1]
    if len(_EXTENDED) >= 64:
        _EXTENDED.clear()
    made = WithUnseen(features, unseen)
    _EXTENDED[key] = (features, made)
    return made


def restore_unknown(word: Sequence[Token], mapped: Sequence[Token], output: Word) -> Word:
    """Put unseen tokens back where the model kept or copied them.

    Both backends read an unseen token as `<unk>`. If the word has one kind of unseen
    token, every `<unk>` in the output is that token; with several kinds, they are put
    back in order when the output has as many `<unk>` as the input, else left as `<unk>`.
    """
    unknown = [orig for orig, m in zip(word, mapped) if m == UNK and orig != UNK]
    if not unknown or UNK not in output:
        return output
    kinds = set(unknown)
    if len(kinds) == 1:
        (only,) = kinds
        return tuple(only if t == UNK else t for t in output)
    if output.count(UNK) == len(unknown):
        it = iter(unknown)
        return tuple(next(it) if t == UNK else t for t in output)
    return output


class Model(_Record):
    """A learned model: per column pair (source, target) a `PairModel`. `options` are
    the learning options as saved (plain data: loading a model needs no learner)."""

    FIELDS: ClassVar[tuple[str, ...]] = ("columns", "features", "options", "alphabet", "pairs", "name", "rows")
    columns: tuple[str, ...]
    features: dict[str, dict[str, bool]]
    options: dict[str, Any]
    alphabet: tuple[Token, ...]
    pairs: dict[tuple[int, int], PairModel]
    name: str
    # The rows learned from (cells None where unknown), for `report` and `training_pairs`;
    # empty for a model saved without them.
    rows: tuple[tuple[Word | None, ...], ...]

    def __init__(
        self, columns: tuple[str, ...], features: dict[str, dict[str, bool]], options: dict[str, Any],
        alphabet: tuple[Token, ...], pairs: dict[tuple[int, int], PairModel], name: str = "",
        rows: tuple[tuple[Word | None, ...], ...] = (),
    ) -> None:
        self._set(columns=columns, features=features, options=options, alphabet=alphabet, pairs=pairs, name=name,
                  rows=rows)

    def training_pairs(self, pm: PairModel) -> list[tuple[Word, Word]]:
        """The (source, target) words a column pair was learned from (none if not kept)."""
        pairs = [(row[pm.source], row[pm.target]) for row in self.rows]
        return [(s, t) for s, t in pairs if s is not None and t is not None]

    def pair(self, source: int | str | None = None, target: int | str | None = None) -> PairModel:
        """The pair model for columns given by index or name (defaults: the only pair)."""
        s = None if source is None else self._column(source)
        t = None if target is None else self._column(target)
        matches = [
            pm
            for (ps, pt), pm in sorted(self.pairs.items())
            if (s is None or ps == s) and (t is None or pt == t)
        ]
        if not matches:
            raise Error(
                f"no learned column pair matches source={source!r} target={target!r}; "
                f"pairs: {', '.join(self.pair_names())}"
            )
        if len(matches) > 1:
            raise Error(
                f"the model has {len(matches)} column pairs; choose one with --source/--target "
                f"({', '.join(self.pair_names())})"
            )
        return matches[0]

    # -- the Python API for a model of one column pair (`pair` picks one of several)

    def only_pair(self) -> PairModel:
        """The model's column pair, if it has only one (what `apply` and the others use)."""
        if len(self.pairs) != 1:
            raise Error(
                f"the model has {len(self.pairs)} column pairs ({', '.join(self.pair_names())}): "
                "pick one with model.pair(source, target)"
            )
        return next(iter(self.pairs.values()))

    @property
    def rules(self) -> dsl.Program:
        """The program of the model's column pair."""
        return self.only_pair().rules

    @property
    def fst(self) -> "pynini.Fst":
        """The transducer of the model's column pair, its passes composed."""
        return self.only_pair().fst

    def apply(self, word: str | Sequence[Token]) -> str | Word:
        """`PairModel.apply` with the model's column pair."""
        return self.only_pair().apply(word)

    def apply_many(self, words: Iterable[str | Sequence[Token]]) -> list:
        """`PairModel.apply_many` with the model's column pair."""
        return self.only_pair().apply_many(words)

    def pair_names(self) -> list[str]:
        return [f"{self.columns[s]} -> {self.columns[t]}" for s, t in sorted(self.pairs)]

    def _column(self, column: int | str) -> int:
        if isinstance(column, int) or (isinstance(column, str) and column.isdigit()):
            index = int(column)
            if 0 <= index < len(self.columns):
                return index
            raise Error(f"column {index} out of range (0..{len(self.columns) - 1})")
        if column in self.columns:
            return self.columns.index(column)
        raise Error(f"no column named {column!r}; columns: {', '.join(self.columns)}")

    # -- saving
