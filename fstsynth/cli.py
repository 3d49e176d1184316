"""The `fstsynth` command line: a thin typer layer over the library.

Commands: learn, apply, evaluate, show, report, export, solve. Errors in what the user
gave (files, words, options) print one line `fstsynth: error: ...` and exit with code 2;
`--debug` shows the traceback instead. `apply --check` and `solve --check` exit with
code 1 if the transducer and the interpreter disagree anywhere. Warnings go to standard
error as `fstsynth: ...` lines; `learn` and `solve` show their progress there
(`fstsynth.console`; `--quiet` turns it off).

The library is imported inside each command, so that a command loads only what it uses
(`apply` needs neither the aligner nor the learner).
"""

from __future__ import annotations

import inspect
import json
import logging
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import typer
from typer.core import TyperGroup

try:  # typer 0.29 carries its own copy of click
    from typer._click.exceptions import ClickException, UsageError
except ImportError:  # pragma: no cover - older typer uses click itself
    # Where click is installed beside typer 0.29, mypy reads this as a second type for
    # the names [assignment]; where it is not, as the names defined twice [no-redef].
    from click.exceptions import ClickException, UsageError  # type: ignore[assignment, no-redef]

from fstsynth import guard
from fstsynth.errors import UserError
from fstsynth.apply_command import APPLY_ARGUMENTS, APPLY_HELP, APPLY_OPTIONS, run_apply
from fstsynth.command_errors import guarded

if TYPE_CHECKING:
    from fstsynth.model import Model, PairModel
    from fstsynth.synthesis import Options


class _OneLineUsageErrors(TyperGroup):
    """The command group with usage errors (a missing argument, an unknown option or
    command, a bad option value) reported as every other error is: one line
    `fstsynth: error: ...` naming what is wrong and the help to read, exit code 2 (typer
    would draw a framed box of several lines). `--help` and the help shown for a bare
    `fstsynth` are unchanged."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             windows_expand_args: bool = True, **extra: Any) -> Any:
        rest = dict(args=args, prog_name=prog_name, complete_var=complete_var,
                    windows_expand_args=windows_expand_args, **extra)
        if not standalone_mode:
            return super().main(standalone_mode=False, **rest)
        try:
            code = super().main(standalone_mode=False, **rest)
        except UsageError as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # as typer does: the help is printed already
                sys.exit(2)
            typer.echo(f"fstsynth: error: {_usage_error_line(exc)}", err=True)
            sys.exit(exc.exit_code)
        except ClickException as exc:
            typer.echo(f"fstsynth: error: {' '.join(exc.format_message().split())}", err=True)
            sys.exit(exc.exit_code)
        except typer.Abort:
            typer.echo("fstsynth: error: aborted", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


def _usage_error_line(exc: UsageError) -> str:
    """`learn: missing argument 'input' (see fstsynth learn --help)`: click's message on
    one line, the command it is about first."""
    message = " ".join(exc.format_message().split())
    message = (message[:1].lower() + message[1:]).rstrip(".")
    if exc.ctx is None:
        return message
    path = exc.ctx.command_path.split()
    where = f"{' '.join(path[1:])}: " if len(path) > 1 else ""
    return f"{where}{message} (see {exc.ctx.command_path} --help)"


app = typer.Typer(
    cls=_OneLineUsageErrors,
    add_completion=False,
    no_args_is_help=True,
    help="Learn phonological rules from word pairs and compile them into transducers.",
)

_state = {"debug": False}


def _fail(message: str, code: int = 2) -> None:
    typer.echo(f"fstsynth: error: {message}", err=True)
    raise typer.Exit(code)


def _guard(func: Callable[[], int | None]) -> None:
    """Run a command body in `command_errors.guarded` (user and environment errors as one
    line, exit code 2; a closed output pipe quietly; see there); its exit code, if not
    0, ends the command."""
    code = guarded(func, _state["debug"])
    if code:
        raise typer.Exit(code)


@app.callback()
def main(
    ctx: typer.Context,
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log progress details."),
    memory_limit: Optional[str] = typer.Option(
        None, "--memory-limit", envvar="FSTSYNTH_MEMORY_LIMIT",
        help="Stop when fstsynth and its workers use more memory than this: 8G, 500M, or none "
        "(default: half the machine's memory).",
    ),
) -> None:
    _state["debug"] = debug
    try:
        ctx.call_on_close(guard.start_from_option(memory_limit).stop)  # watchdog: see fstsynth.guard
    except UserError as exc:
        _fail(str(exc))
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="fstsynth: %(message)s",
        force=True,
    )


#: Seconds per column pair when --time-limit is not given (README "Limits"); 0 lifts it.
DEFAULT_TIME_LIMIT = 600.0
TIME_LIMIT_HELP = "Seconds allowed per column pair (default 600; 0: no limit)."


def _options(variant: str, time_limit: Optional[float], alignment: str) -> "Options":
    """The learning options, checked; errors name the command-line option."""
    from fstsynth.api import options

    if time_limit is not None and not time_limit >= 0:
        raise UserError(f"--time-limit must be a number of seconds (0: no limit), not {time_limit}")
    return options(variant, time_limit or None, alignment)


QUIET_HELP = "Show no progress (on a terminal a progress bar, elsewhere a line per stage, on stderr)."


VARIANT_HELP = (
    "Ranking preference: token (specific rules), feature (general), nofeature, or auto "
    "(the default: per column pair, the variant that cross-validates best on the training rows)."
)
DEFAULT_VARIANT = "auto"
FEATURES_HELP = (
    "JSON file: token -> {feature: true/false}, e.g. {\"z\": {\"voice\": true, \"sibilant\": true}} "
    "(README: Features)."
)


@app.command()
def learn(
    input: Path = typer.Argument(..., help="A problem JSON file or a TSV of source<TAB>target."),
    output: Path = typer.Option(..., "--output", "-o", help="Model directory to write."),
    variant: str = typer.Option(DEFAULT_VARIANT, "--variant", help=VARIANT_HELP),
    features: Optional[Path] = typer.Option(None, "--features", help=FEATURES_HELP),
    alignment: str = typer.Option("global", "--alignment", help="global or local."),
    time_limit: Optional[float] = typer.Option(DEFAULT_TIME_LIMIT, "--time-limit", help=TIME_LIMIT_HELP),
    jobs: int = typer.Option(
        1, "--jobs", "-j", min=1,
        help="Worker processes for the cross-validation that picks the variant (same model).",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
) -> None:
    """Learn a program for every column pair of INPUT and write a model directory."""

    def body() -> None:
        from fstsynth.api import learn as learn_pairs
        from fstsynth.console import showing_progress
        from fstsynth.fileio import check_writable
        from fstsynth.learning import collector_paused, one_blas_thread

        checked = _options(variant, time_limit, alignment)  # fail on a bad option before reading
        check_writable(output)  # fail now, not after learning
        started = time.perf_counter()
        with showing_progress(quiet), collector_paused(), one_blas_thread():
            model = learn_pairs(
                input, features=features, variant=variant, time_limit=checked.time_limit,
                alignment=alignment, jobs=jobs,
            )
            model.save(output)
        typer.echo(f"learned {len(model.pairs)} column pair(s) in {time.perf_counter() - started:.1f}s")
        for (s, t), pm in sorted(model.pairs.items()):
            per_pass = ", ".join(str(len(p.rules)) for p in pm.program.passes) or "0"
            typer.echo(
                f"  {model.columns[s]} -> {model.columns[t]}: rules per pass [{per_pass}], "
                f"training pairs reproduced {pm.train_correct}/{pm.train_total}"
                + (
                    f" (rules learned from a sample of {pm.sampled:,} pairs evenly spaced)"
                    if pm.sampled is not None
                    else ""
                )
                + (
                    f"; configuration chosen by cross-validation on a sample of {pm.cv_sample[1]:,} of "
                    f"{pm.cv_sample[2]:,} pairs ({pm.cv_sample[0]} configurations)"
                    if pm.cv_sample is not None
                    else ""
                )
            )
            if pm.unbuilt is not None:
                typer.echo(f"    note: {pm.unbuilt}")
            hint = _features_hint(pm, given=_has_features(model))
            if hint:
                typer.echo(f"    hint: {hint}")
        typer.echo(f"model written to {output}")

    _guard(body)


@app.command("compile")
def compile_rules(
    rules: Path = typer.Argument(
        ..., help="The rules: the text `fstsynth show` prints, edited or written by hand (docs/commands.md: compile)."
    ),
    output: Path = typer.Option(..., "--output", "-o", help="Model directory to write."),
    features: Optional[Path] = typer.Option(None, "--features", help=FEATURES_HELP),
    data: Optional[Path] = typer.Option(
        None, "--data",
        help="A problem JSON file or a TSV: the model knows its tokens and keeps its rows (for report).",
    ),
    time_limit: Optional[float] = typer.Option(DEFAULT_TIME_LIMIT, "--time-limit", help=TIME_LIMIT_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
) -> None:
    """Compile RULES into a model directory, as `learn` compiles the rules it learns."""

    def body() -> None:
        from fstsynth.api import compile as compile_model
        from fstsynth.console import showing_progress
        from fstsynth.fileio import check_writable

        _options(DEFAULT_VARIANT, time_limit, "global")  # a bad --time-limit fails before any work
        check_writable(output)
        with showing_progress(quiet):
            model = compile_model(rules, features=features, data=data, time_limit=time_limit or None)
            model.save(output)
        for (s, t), pm in sorted(model.pairs.items()):
            per_pass = ", ".join(str(len(p.rules)) for p in pm.program.passes) or "0"
            reproduced = f"rows reproduced {pm.train_correct}/{pm.train_total}" if pm.train_total else "no rows"
            typer.echo(f"  {model.columns[s]} -> {model.columns[t]}: rules per pass [{per_pass}], {reproduced}")
            if pm.unbuilt is not None:
                typer.echo(f"    note: {pm.unbuilt}")
        typer.echo(f"model written to {output}")

    _guard(body)


def _has_features(model: "Model") -> bool:
    """Whether the model has features beyond those fstsynth adds by itself (vowel/cons,
    and the ones derived from IPA)."""
    from fstsynth.features import DERIVED

    return any(
        name not in ("vowel", "cons") and not name.startswith(DERIVED)
        for feats in model.features.values()
        for name in feats
    )


def _features_hint(pm: "PairModel", given: bool) -> str:
    """A word when a program is long for its data and features could shorten it: one
    rule per few training pairs is a list of cases, not a generalization."""
    rules = pm.program.rule_count
    if rules < LONG_PROGRAM_RULES or rules * PAIRS_PER_RULE < pm.train_total:
        return ""
    features = "more features" if given else "a features file"
    return (
        f"{rules} rules for {pm.train_total} training pairs is long: {features} "
        "(natural classes such as voice, vowel, back; README: Features) may let fstsynth "
        "find fewer, general rules"
    )


#: `learn` hints at features for a program of at least this many rules that has fewer
#: than `PAIRS_PER_RULE` training pairs per rule.
LONG_PROGRAM_RULES = 6
PAIRS_PER_RULE = 4


def _apply_command() -> Callable[..., None]:
    """Typer's `apply`, made from `apply_command`'s option table (the one the plain
    command line is read with): its parameters are the table's, its body `run_apply`."""
    params = [
        inspect.Parameter(
            name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=kind,
            default=typer.Argument(... if name == "model_dir" else None, help=help_),
        )
        for name, kind, help_ in APPLY_ARGUMENTS
    ]
    params += [
        inspect.Parameter(
            o.name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
            annotation=o.type if o.flag or o.default is not None else Optional[o.type],
            default=typer.Option(o.default, *o.decls, help=o.help, min=o.minimum),
        )
        for o in APPLY_OPTIONS
    ]

    def apply(**values: Any) -> None:
        _guard(lambda: run_apply(**values))

    apply.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    apply.__annotations__ = {p.name: p.annotation for p in params}
    apply.__doc__ = APPLY_HELP
    return apply


app.command(name="apply")(_apply_command())


@app.command()
def evaluate(
    model_dir: Path = typer.Argument(..., help="A model directory written by `learn`."),
    gold: Path = typer.Argument(..., help="Gold pairs: a TSV of source<TAB>target (or a problem file)."),
    source: Optional[str] = typer.Option(None, "--source", "-s", help="Source column (name or index)."),
    target: Optional[str] = typer.Option(None, "--target", "-t", help="Target column (name or index)."),
    json_path: Optional[Path] = typer.Option(
        None, "--json", help="Also write the figures and every error as JSON to this file."
    ),
    errors: int = typer.Option(10, "--errors", "-n", min=0, help="How many wrong words to print."),
    join: bool = typer.Option(False, "--join", help="Write words without spaces between tokens."),
) -> None:
    """Score the model on gold pairs: Exact, word and token (phone) error rates, errors."""

    def body() -> None:
        from fstsynth.evaluation import evaluate_pairs
        from fstsynth.fileio import atomic_write_text, check_writable
        from fstsynth.formatting import format_evaluation
        from fstsynth.model_file import load_model

        if json_path is not None:
            check_writable(json_path)
        model = load_model(model_dir)
        pm = model.pair(source, target)
        result = evaluate_pairs(pm, gold, max_errors=None if json_path is not None else errors)
        typer.echo(format_evaluation(result, errors, join))
        if json_path is not None:
            text = json.dumps(result.to_json(), ensure_ascii=False, indent=1) + "\n"
            atomic_write_text(json_path, text)

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
        from fstsynth.formatting import format_model
        from fstsynth.model_file import load_model

        model = load_model(model_dir)
        typer.echo(format_model(model, fmt))

    _guard(body)


@app.command()
def report(
    model_dir: Path = typer.Argument(..., help="A model directory written by `learn`."),
    output: Path = typer.Option(..., "--output", "-o", help="HTML file to write."),
    source: Optional[str] = typer.Option(None, "--source", "-s", help="Source column (name or index)."),
    target: Optional[str] = typer.Option(None, "--target", "-t", help="Target column (name or index)."),
    data: Optional[Path] = typer.Option(
        None, "--data", help="The training file, for a model saved without its training words."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
) -> None:
    """Write one self-contained HTML page: the rules at work on the training words."""

    def body() -> None:
        from fstsynth.console import showing_progress
        from fstsynth.fileio import check_writable
        from fstsynth.model_file import load_model
        from fstsynth.problem import load_problem
        from fstsynth.report import write_report

        check_writable(output)
        model = load_model(model_dir)
        chosen = None if source is None and target is None else [model.pair(source, target)]
        rows = None
        if data is not None:
            problem = load_problem(data)
            if len(problem.columns) != len(model.columns):
                raise UserError(
                    f"{data}: has {len(problem.columns)} columns; the model was learned from {len(model.columns)}"
                )
            rows = problem.cells
        with showing_progress(quiet):
            write_report(model, output, chosen, rows)
        typer.echo(f"wrote {output}")

    _guard(body)


EXPORT_HELP = (
    "far (OpenFst archive), att (AT&T text + .syms, for HFST and foma), "
    "foma (a foma/XFST script of the rules), dot or svg (a drawing), "
    "pynini (a Python module of Pynini rewrite rules)."
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
        from fstsynth.model_file import load_model

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
    time_limit: Optional[float] = typer.Option(DEFAULT_TIME_LIMIT, "--time-limit", help=TIME_LIMIT_HELP),
    check: bool = typer.Option(
        False, "--check", help="Also run the interpreter on every answer; exit 1 on any difference."
    ),
    jobs: int = typer.Option(
        1, "--jobs", "-j", min=1, help="Worker processes (problems are spread over them; same answers)."
    ),
    scheduler: Optional[str] = typer.Option(
        None, "--scheduler", help="Solve each problem as a task on the Dask cluster at this address "
        "(pip install 'fstsynth[dask]'; same answers).",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
) -> None:
    """Fill every `?` of each problem and write an answer file of the same name in OUT."""

    def body() -> None:
        from fstsynth.console import showing_progress
        from fstsynth.fileio import check_writable
        from fstsynth.learning import collector_paused, one_blas_thread

        files = _problem_files(problems)
        options = _options(variant, time_limit, alignment)
        if scheduler is not None and jobs > 1:
            raise UserError("solve: --jobs runs here and --scheduler on a cluster: give one of them")
        if out.exists() and not out.is_dir():
            raise UserError(f"{out}: exists and is not a directory")
        if not out.exists():
            check_writable(out)
            out.mkdir()
        check_writable(out / "answer")
        started = time.perf_counter()
        with showing_progress(quiet), collector_paused(), one_blas_thread():
            total_mismatches, failures = _solve_all(files, options, out, check, jobs, scheduler)
        typer.echo(
            f"solved {len(files) - failures}/{len(files)} problem(s) in {time.perf_counter() - started:.1f}s"
            + (f"; interpreter/transducer mismatches: {total_mismatches}" if check else "")
        )
        if total_mismatches:
            raise typer.Exit(1)
        if failures == len(files):
            raise typer.Exit(2)

    _guard(body)


def _solve_all(
    files: Sequence[Path], options: "Options", out: Path, check: bool, jobs: int, scheduler: str | None = None
) -> tuple[int, int]:
    """Solve each file and write its answers; (mismatches, problems that failed)."""
    from fstsynth import progress
    from fstsynth.parallel import solve_files
    from fstsynth.solve import fallback_report, write_answers

    total_mismatches = 0
    failures = 0
    progress.report("problem", 0, len(files), files[0].name)
    if scheduler is None:
        results = solve_files(files, options, check=check, jobs=jobs)
    else:
        from fstsynth.cluster import solve_on_cluster

        results = solve_on_cluster(files, options, scheduler, check=check)
    for k, result in enumerate(results, start=1):
        progress.report("problem", k, len(files), files[k].name if k < len(files) else "")
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
    return total_mismatches, failures


if __name__ == "__main__":  # pragma: no cover
    app()
