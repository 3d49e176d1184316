"""The `fstsynth` command line: a thin typer layer over the library.

Commands: learn, apply, show, solve, export. Errors in what the user gave (files, words,
options) print one line `fstsynth: error: ...` and exit with code 2; `--debug` shows
the traceback instead. `apply --check` and `solve --check` exit with code 1 if the
transducer and the interpreter disagree anywhere.

The learner (and lingpy behind it) and the compiler are imported inside the commands
that use them: `apply` reads a model and its tables and needs neither.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import sys
import time
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Callable, List, Optional

import typer

from fstsynth.errors import UserError
from fstsynth.fileio import check_writable
from fstsynth.model import Model, load_model, learn_model

if TYPE_CHECKING:
    from fstsynth.synthesis import Options

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Learn phonological rules from word pairs and compile them into transducers.",
)

_state = {"debug": False}


def _fail(message: str, code: int = 2) -> None:
    typer.echo(f"fstsynth: error: {message}", err=True)
    raise typer.Exit(code)


def _guard(func: Callable[[], None]) -> None:
    """Run a command body; user errors become one line and exit code 2.

    Errors from the environment (a full disk, a file that vanished, no memory) are not
    bugs either, and get one line too; anything else keeps its traceback. A closed
    output pipe (`fstsynth apply ... | head`) ends the command quietly.
    """
    try:
        func()
    except UserError as exc:
        if _state["debug"]:
            raise
        _fail(str(exc))
    except BrokenPipeError:
        # Python would complain again when flushing stdout at exit: point it at devnull.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise typer.Exit(141)
    except OSError as exc:
        if _state["debug"]:
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        _fail(f"{where}{exc.strerror or exc}")
    except MemoryError:
        if _state["debug"]:
            raise
        _fail("out of memory (see the Limits section of the README)")
    except KeyboardInterrupt:
        typer.echo("fstsynth: interrupted; files being written were left as they were", err=True)
        raise typer.Exit(130)


@app.callback()
def main(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log progress details."),
) -> None:
    _state["debug"] = debug
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="fstsynth: %(message)s",
        force=True,
    )


def _options(variant: str, time_limit: Optional[float], alignment: str) -> "Options":
    from fstsynth.synthesis import Options

    if time_limit is not None and not time_limit > 0:
        raise UserError(f"--time-limit must be a positive number of seconds, not {time_limit}")
    return Options(variant=variant, time_limit=time_limit, alignment=alignment)


def _progress(total_hint: bool) -> Callable[[int, int, str], None] | None:
    if not total_hint:
        return None

    def show(done: int, total: int, label: str) -> None:
        if total > 1:
            typer.echo(f"  [{done}/{total}] {label}", err=True)

    return show


def _features_file(path: Optional[Path]) -> dict[str, dict[str, bool]]:
    if path is None:
        return {}
    try:
        raw = json.loads(path.read_bytes().decode("utf-8-sig"))
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, not a features file") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: not valid UTF-8") from None
    except json.JSONDecodeError as exc:
        raise UserError(
            f"{path}: line {exc.lineno}, column {exc.colno}: not valid JSON: {exc.msg}"
        ) from None
    if not isinstance(raw, dict) or not all(
        isinstance(v, dict) and all(isinstance(b, bool) for b in v.values()) for v in raw.values()
    ):
        raise UserError(f"{path}: features must map each token to {{feature: true/false}}")
    from fstsynth.problem import nfc

    return {nfc(tok): {nfc(k): b for k, b in feats.items()} for tok, feats in raw.items()}


DEFAULT_VARIANT = "auto"  # `Options().variant`, without importing the learner here
VARIANT_HELP = (
    "Ranking preference: token (specific rules), feature (general), nofeature, or auto "
    "(the default: per column pair, the variant that cross-validates best on the training rows)."
)


@app.command()
def learn(
    input: Path = typer.Argument(..., help="A problem JSON file or a TSV of source<TAB>target."),
    output: Path = typer.Option(..., "--output", "-o", help="Model directory to write."),
    variant: str = typer.Option(DEFAULT_VARIANT, "--variant", help=VARIANT_HELP),
    features: Optional[Path] = typer.Option(
        None, "--features", help="JSON file: token -> {feature: true/false}."
    ),
    alignment: str = typer.Option("global", "--alignment", help="global or local."),
    time_limit: Optional[float] = typer.Option(
        None, "--time-limit", help="Seconds allowed per column pair."
    ),
    jobs: int = typer.Option(
        1, "--jobs", "-j", min=1,
        help="Worker processes for the cross-validation that picks the variant (same model).",
    ),
) -> None:
    """Learn a program for every column pair of INPUT and write a model directory."""

    def body() -> None:
        options = _options(variant, time_limit, alignment)
        check_writable(output)  # fail now, not after learning
        from fstsynth.problem import load_problem

        problem = load_problem(input)
        extra = _features_file(features)
        if extra:
            merged = {tok: dict(f) for tok, f in problem.features.items()}
            for tok, f in extra.items():
                merged.setdefault(tok, {}).update(f)
            problem_ = dataclasses.replace(problem, features=merged)
        else:
            problem_ = problem
        started = time.perf_counter()
        model = learn_model(problem_, options, _progress(True), jobs=jobs)
        model.save(output)
        typer.echo(f"learned {len(model.pairs)} column pair(s) in {time.perf_counter() - started:.1f}s")
        for (s, t), pm in sorted(model.pairs.items()):
            per_pass = ", ".join(str(len(p.rules)) for p in pm.program.passes) or "0"
            typer.echo(
                f"  {model.columns[s]} -> {model.columns[t]}: rules per pass [{per_pass}], "
                f"training pairs reproduced {pm.train_correct}/{pm.train_total}"
            )
        typer.echo(f"model written to {output}")

    _guard(body)


def tokenize(text: str, alphabet: set[str]) -> tuple[str, ...]:
    """A word as typed: space-separated tokens, or else longest known tokens / graphemes."""
    text = unicodedata.normalize("NFC", text).strip()
    if " " in text or not text:
        return tuple(text.split())  # as `problem.parse_word` (whose import costs more)
    from fstsynth.problem import split_graphemes

    graphemes = split_graphemes(text)
    longest = max((len(split_graphemes(t)) for t in alphabet), default=1)
    out = []
    k = 0
    while k < len(graphemes):
        for size in range(min(longest, len(graphemes) - k), 0, -1):
            candidate = "".join(graphemes[k : k + size])
            if candidate in alphabet or size == 1:
                out.append(candidate)
                k += size
                break
    return tuple(out)


def _argument_words(words: List[str]) -> List[str]:
    for n, word in enumerate(words, start=1):
        try:
            word.encode("utf-8")
        except UnicodeEncodeError:  # undecodable bytes arrive as lone surrogates
            raise UserError(f"word argument {n}: not valid UTF-8") from None
    return words


@app.command()
def apply(
    model_dir: Path = typer.Argument(..., help="A model directory written by `learn`."),
    words: Optional[List[str]] = typer.Argument(
        None, help="Words as space-separated tokens (quote each); default: one per line on stdin."
    ),
    source: Optional[str] = typer.Option(None, "--source", "-s", help="Source column (name or index)."),
    target: Optional[str] = typer.Option(None, "--target", "-t", help="Target column (name or index)."),
    check: bool = typer.Option(
        False, "--check", help="Also run the interpreter; exit 1 listing words where they differ."
    ),
    trace: bool = typer.Option(
        False, "--trace", help="Show each word's form after every pass and the rules that fired."
    ),
) -> None:
    """Predict the target form of each word with the compiled transducer."""

    def body() -> None:
        from fstsynth.stream import line_batches, predict_batches

        model = load_model(model_dir)
        pm = model.pair(source, target)
        alphabet = set(model.alphabet)
        mismatches = []
        # Read, predict and write a batch at a time (`fstsynth.stream`).
        batches = [_argument_words(words)] if words else line_batches(sys.stdin.buffer)
        for batch in predict_batches(pm, batches, lambda line: tokenize(line, alphabet)):
            if not (trace or check):
                typer.echo("\n".join(batch.texts(" ")))
                continue
            out = []
            for word, prediction in zip(batch.words, batch.predictions):
                out.append(" ".join(prediction))
                if trace:
                    from exporters.spe import derivation

                    mapped = pm.map_unknown(word)
                    out.extend("  " + line for line in derivation(pm.program, mapped, model.features))
                if check:
                    interpreted = pm.interpret(word, model.features)
                    if interpreted != prediction:
                        mismatches.append((word, prediction, interpreted))
            typer.echo("\n".join(out))
        if mismatches:
            for word, fst_out, interp in mismatches:
                typer.echo(
                    f"fstsynth: mismatch on {' '.join(word)!r}: transducer {' '.join(fst_out)!r}, "
                    f"interpreter {' '.join(interp)!r}",
                    err=True,
                )
            raise typer.Exit(1)

    _guard(body)


SHOW_FORMATS = ("dsl", "spe")


@app.command()
def show(
    model_dir: Path = typer.Argument(..., help="A model directory written by `learn`."),
    fmt: str = typer.Option(
        "dsl", "--format", "-f", help="dsl (the paper's notation) or spe (a -> b / c _ d)."
    ),
) -> None:
    """Print the learned rules, pass by pass."""

    def body() -> None:
        if fmt not in SHOW_FORMATS:
            raise UserError(f"unknown --format {fmt!r}; choose one of {', '.join(SHOW_FORMATS)}")
        model = load_model(model_dir)
        typer.echo(format_model(model, fmt))

    _guard(body)


def format_model(model: Model, fmt: str = "dsl") -> str:
    from exporters.spe import rule_to_spe

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


EXPORT_HELP = (
    "far (OpenFst archive), att (AT&T text + .syms, for HFST and foma), "
    "foma (a foma/XFST script of the rules), dot or svg (a drawing)."
)


@app.command()
def export(
    model_dir: Path = typer.Argument(..., help="A model directory written by `learn`."),
    fmt: str = typer.Option(..., "--format", "-f", help=EXPORT_HELP),
    output: Path = typer.Option(..., "--output", "-o", help="File to write."),
    source: Optional[str] = typer.Option(None, "--source", "-s", help="Source column (name or index)."),
    target: Optional[str] = typer.Option(None, "--target", "-t", help="Target column (name or index)."),
    passes: bool = typer.Option(
        False, "--passes",
        help="far, att, foma: one transducer per pass (applied in order) instead of their composition.",
    ),
) -> None:
    """Write a column pair's transducer (or rules) in a format other FST tools read."""

    def body() -> None:
        from exporters.export import export_model

        model = load_model(model_dir)
        for path in export_model(model, fmt, output, source, target, passes):
            typer.echo(f"wrote {path}")

    _guard(body)


def _problem_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in (".json", ".tsv"))
        if not files:
            raise UserError(f"{path}: no .json or .tsv problem files in this directory")
        return files
    if not path.exists():
        raise UserError(f"{path}: no such file or directory")
    return [path]


@app.command()
def solve(
    problems: Path = typer.Argument(..., help="A problem file, or a directory of them."),
    out: Path = typer.Option(..., "--out", help="Directory for the answer files (created)."),
    variant: str = typer.Option(DEFAULT_VARIANT, "--variant", help=VARIANT_HELP),
    alignment: str = typer.Option("global", "--alignment", help="global or local."),
    time_limit: Optional[float] = typer.Option(
        None, "--time-limit", help="Seconds allowed per column pair."
    ),
    check: bool = typer.Option(
        False, "--check", help="Also run the interpreter on every answer; exit 1 on any difference."
    ),
    jobs: int = typer.Option(
        1, "--jobs", "-j", min=1, help="Worker processes (problems are spread over them; same answers)."
    ),
) -> None:
    """Fill every `?` of each problem and write an answer file of the same name in OUT."""

    def body() -> None:
        from fstsynth.parallel import solve_files
        from fstsynth.solve import fallback_report, write_answers

        files = _problem_files(problems)
        options = _options(variant, time_limit, alignment)
        if out.exists() and not out.is_dir():
            raise UserError(f"{out}: exists and is not a directory")
        if not out.exists():
            check_writable(out)
            out.mkdir()
        check_writable(out / "answer")
        started = time.perf_counter()
        total_mismatches = 0
        failures = 0
        for result in solve_files(files, options, check=check, jobs=jobs):
            path = result.path
            if result.problem is None:
                typer.echo(f"fstsynth: error: {result.load_error}", err=True)
                failures += 1
                continue
            problem = result.problem
            if result.report is None:
                typer.echo(
                    f"fstsynth: {path.name}: cannot learn ({result.learn_error}); writing best guesses",
                    err=True,
                )
                report = fallback_report(problem)
                failures += 1
            else:
                report = result.report
            write_answers(problem, report, out)
            mism = report.mismatches
            total_mismatches += len(mism)
            for a in mism:
                typer.echo(
                    f"fstsynth: mismatch in {path.name} row {a.row + 1}: transducer "
                    f"{' '.join(a.word)!r}, interpreter {' '.join(a.interpreter or ())!r}",
                    err=True,
                )
            typer.echo(
                f"{path.name}: {len(report.answers)} cell(s) filled in {report.seconds.get('total', 0):.1f}s"
                + (f", {len(mism)} mismatch(es)" if check else "")
            )
        typer.echo(
            f"solved {len(files) - failures}/{len(files)} problem(s) in {time.perf_counter() - started:.1f}s"
            + (f"; interpreter/transducer mismatches: {total_mismatches}" if check else "")
        )
        if total_mismatches:
            raise typer.Exit(1)
        if failures == len(files):
            raise typer.Exit(2)

    _guard(body)


if __name__ == "__main__":  # pragma: no cover
    app()
