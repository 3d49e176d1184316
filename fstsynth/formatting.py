"""Text the commands print: an evaluation's figures and errors, a model's rules, the
warning about tokens a model has never seen.

Public API:
    format_evaluation(result, shown, join=False) -> str
    format_model(model, fmt="dsl") -> str
    unseen_warning(unseen, alphabet, features) -> str | None
    APPLY_FORMATS, tab_warning(name, line)   (`apply`'s output formats, and its warning
                                              for a source<TAB>target line)
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Iterable, Sequence

if TYPE_CHECKING:
    from fstsynth.evaluation import Evaluation
    from fstsynth.model import Model
    from fstsynth.types import Features


def format_evaluation(result: "Evaluation", shown: int, join: bool = False) -> str:
    """The figures of an `evaluation.Evaluation` and its first `shown` errors, as text."""
    def word(tokens: Sequence[str]) -> str:
        return ("" if join else " ").join(tokens) or "∅"

    lines = [
        f"words   {result.words}",
        f"correct {result.correct}",
        f"Exact   {100 * result.exact:.2f}%",
        f"WER     {100 * result.wer:.2f}%",
        f"PER     {100 * result.per:.2f}%  ({result.edits} token edits / {result.target_tokens} target tokens)",
    ]
    mistakes = result.errors[:shown]
    if mistakes:
        more = f" (first {len(mistakes)} of {result.error_count})" if result.error_count > len(mistakes) else ""
        lines.append(f"errors{more}:")
        for m in mistakes:
            lines.append(
                f"  {word(m.source)}: predicted {word(m.prediction)}, expected {word(m.target)} "
                f"({m.edits} edit{'s' if m.edits != 1 else ''})"
            )
            lines.extend(f"    {f}" for f in m.firings)
            if not m.firings:
                lines.append("    (no rule fired)")
    return "\n".join(lines)


def format_model(model: "Model", fmt: str = "dsl") -> str:
    """The rules of every column pair, pass by pass: in the DSL (`dsl`) or as SPE rules (`spe`)."""
    from fstsynth.spe import rule_to_spe

    lines = []
    for (s, t), pm in sorted(model.pairs.items()):
        lines.append(
            f"{model.columns[s]} -> {model.columns[t]}  "
            f"({pm.program.rule_count} rules, {pm.train_correct}/{pm.train_total} training pairs)"
        )
        if not pm.program.passes:
            lines.append("  (no rules: every token is kept)")
        for k, pass_ in enumerate(pm.program.passes, start=1):
            lines.append(f"  pass {k}:")
            for n, rule in enumerate(pass_.rules, start=1):
                lines.append(f"    {n:>3}. {rule_to_spe(rule) if fmt == 'spe' else rule}")
            lines.append("         else Identity(x)" if fmt == "dsl" else "         else: unchanged")
        lines.append("")
    return "\n".join(lines).rstrip()


def unseen_warning(
    unseen: Counter, alphabet: Iterable[str] = (), features: Features | None = None
) -> str | None:
    """The warning about tokens never seen in training (`unseen`: each token and the
    number of lines it is on; the most common 20 of each kind are named), or None for
    none. Those the model reads by their IPA features (`features.read_by_ipa` with the
    model's `features`) are named apart from those it reads as <unk>. A token that
    looks like one of `alphabet` (the trained tokens: `ɡ` U+0261 typed for `g`) is
    named with both code points, as the likely typing slip it is."""
    if not unseen:
        return None
    from fstsynth.features import read_by_ipa
    from fstsynth.problem import code_points, look_alike

    known = tuple(alphabet)

    def named(tok: str, n: int) -> str:
        words = f"{n} word{'s' if n > 1 else ''}"
        like = look_alike(tok, known) if known else None
        if like is None:
            return f"{tok} ({words})"
        return f"{tok} ({words}; {code_points(tok)}, which looks like the trained token {like}, {code_points(like)})"

    def listed(tokens: Counter) -> str:
        common = sorted(tokens.items(), key=lambda kv: (-kv[1], kv[0]))[:20]
        more = f", and {len(tokens) - 20} more" if len(tokens) > 20 else ""
        return ", ".join(named(tok, n) for tok, n in common) + more

    by_features = Counter(
        {tok: n for tok, n in unseen.items() if features and read_by_ipa([tok], features) is not None}
    )
    as_unk = unseen - by_features
    parts = [f"tokens never seen in training: {listed(as_unk)}; the model reads them as <unk>"] if as_unk else []
    if by_features:
        parts.append(f"tokens never seen in training, read by their IPA features: {listed(by_features)}")
    return "; ".join(parts) + " (README: Tokens the model has never seen)"


APPLY_FORMATS = ("plain", "tsv")


def tab_warning(name: str, line: int) -> str:
    """The warning for the first `source<TAB>target` line of an input to `apply`."""
    return (
        f"{name}: line {line} has a tab: the word is its first field (the source); "
        "to score source<TAB>target lines use `fstsynth evaluate MODEL FILE`"
    )
