"""`fstsynth apply`: its options (one table, from which `fstsynth.cli` makes typer's
command and which the plain command line is read with), and its body.

Public API:
    APPLY_ARGUMENTS, APPLY_OPTIONS, APPLY_HELP, APPLY_FORMATS, ApplyOption, WATCH_BYTES, SHARES_VARIABLE,
    TIMELINE_VARIABLE
    run_apply(model_dir, words=None, source=None, target=None, check=False, trace=False,
              fmt="plain", join=False, jobs=1, on_input=None, ..., timeline=None) -> int
    plain_apply(argv) -> int | None

Why apart from `fstsynth.cli`: importing typer (and the rest of the command line) is a
large share of a one-word `apply` (~0.07 s of CPU of ~0.25 s, Python's own start-up
included), and `apply` is the command users run in pipelines, on one word or on
millions. `python -m fstsynth` runs a plain `apply` command line here without typer
(`plain_apply`); typer's `apply` is made from the same option table and calls the same
`run_apply` (tests/test_cli.py runs both on the same command lines and compares output,
errors and exit codes). Only what `apply` uses is imported: the model reader, the
streaming applier, the error types; numpy when a batch large enough for it comes.
"""

from __future__ import annotations

import functools
import os
import stat
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, List, NamedTuple, Optional, Sequence

from fstsynth.command_errors import MISMATCH, echo, error, guarded, warn
from fstsynth.errors import UserError
from fstsynth.formatting import APPLY_FORMATS, tab_warning

if TYPE_CHECKING:
    from fstsynth.block_pool import Shares, Timeline
    from fstsynth.guard import Guard
    from fstsynth.model import PairModel
    from fstsynth.stream import Applied, BlockApplier
    from fstsynth.types import Features

#: Set (to anything but ""), `apply --jobs N` on a regular file ends by printing each
#: process's share of the work on standard error: its blocks and CPU seconds.
SHARES_VARIABLE = "FSTSYNTH_JOBS_SHARES"
#: Set to a file's path, a plain `apply` command line appends to that file a timeline of
#: each of its processes (`block_pool.Timeline`): when it loaded the model, forked, made,
#: waited for and wrote out each block, ended.
TIMELINE_VARIABLE = "FSTSYNTH_JOBS_TIMELINE"

APPLY_HELP = "Predict the target form of each word with the compiled transducer."


class ApplyOption(NamedTuple):
    """One of `fstsynth apply`'s options: the parameter of `run_apply` it sets, the
    words that name it, its type (`bool`: a flag; else it takes the next word as its
    value), default, help, and least value (for numbers)."""

    name: str
    decls: tuple[str, ...]
    type: type
    default: object
    help: str
    minimum: int | None = None

    @property
    def flag(self) -> bool:
        return self.type is bool


#: `fstsynth apply`'s positional arguments: the parameter, its type, its help.
APPLY_ARGUMENTS: tuple[tuple[str, object, str], ...] = (
    ("model_dir", Path, "A model directory written by `learn`."),
    ("words", Optional[List[str]], "Words as space-separated tokens (quote each); default: one per line on stdin."),
)

#: `fstsynth apply`'s options.
APPLY_OPTIONS = (
    ApplyOption("source", ("--source", "-s"), str, None, "Source column (name or index)."),
    ApplyOption("target", ("--target", "-t"), str, None, "Target column (name or index)."),
    ApplyOption("check", ("--check",), bool, False,
                "Also run the interpreter; exit 1 listing words where they differ."),
    ApplyOption("trace", ("--trace",), bool, False,
                "Show each word's form after every pass and the rules that fired."),
    ApplyOption("fmt", ("--format", "-f"), str, "plain",
                "plain: one prediction per line; tsv: word<TAB>prediction (the word as given)."),
    ApplyOption("join", ("--join",), bool, False, "Write predictions without spaces between tokens."),
    ApplyOption("jobs", ("--jobs", "-j"), int, 1,
                "Worker processes for standard input, a block of lines each at a time (the same output).",
                minimum=1),
    ApplyOption("output_dir", ("--output-dir", "-o"), Path, None,
                "Read the WORD arguments as files of words, one per line; write each one's predictions to a file "
                "of the same name here (what apply prints for the file on stdin)."),
    ApplyOption("scheduler", ("--scheduler",), str, None,
                "With --output-dir: one task per file on the Dask cluster at this address "
                "(pip install 'fstsynth[dask]'; the workers must see the files)."),
)


def _argument_words(words: List[str]) -> List[str]:
    for n, word in enumerate(words, start=1):
        try:
            word.encode("utf-8")
        except UnicodeEncodeError:  # undecodable bytes arrive as lone surrogates
            raise UserError(f"word argument {n}: not valid UTF-8") from None
    return words


def run_apply(
    model_dir: Path,
    words: Optional[List[str]] = None,
    source: Optional[str] = None,
    target: Optional[str] = None,
    check: bool = False,
    trace: bool = False,
    fmt: str = "plain",
    join: bool = False,
    jobs: int = 1,
    on_input: Optional[Callable[[int], None]] = None,
    output_dir: Optional[str | Path] = None,
    scheduler: Optional[str] = None,
    timeline: "Timeline | None" = None,
) -> int:
    """`fstsynth apply`'s body (see `APPLY_OPTIONS`): predictions on standard output;
    exit code 0, or 1 if `check` found words where the transducer and the interpreter
    differ. Errors are raised (`guarded` reports them). `on_input`: called with the
    bytes of standard input read so far, after each read. With `output_dir`, `words`
    are files of words, each predicted into a file there, on the Dask cluster at
    `scheduler` if given (`fstsynth.cluster.apply_files`). `timeline`: events marked
    there (`block_pool.Timeline`)."""
    from fstsynth.model_file import load_model
    from fstsynth.stream import blocks

    if output_dir is not None or scheduler is not None:
        if output_dir is None:
            raise UserError("apply --scheduler: give --output-dir DIR and the files of words to read")
        if check or trace or jobs > 1:
            raise UserError("apply --output-dir writes predictions only, a file at a time: run --check, --trace "
                            "and --jobs without it")
        from fstsynth.cluster import apply_files
        from fstsynth.fileio import set_up_deferred_logging

        set_up_deferred_logging()  # (the cluster's module logs through `logging`)
        apply_files(model_dir, words or [], output_dir, scheduler, source, target, fmt, join)
        return 0

    if fmt not in APPLY_FORMATS:
        raise UserError(f"unknown --format {fmt!r}; choose one of {', '.join(APPLY_FORMATS)}")
    if jobs < 1:
        raise UserError(f"--jobs must be at least 1, not {jobs}")
    model = load_model(model_dir)
    if timeline is not None:
        timeline.mark("loaded")
    pm = model.pair(source, target)
    alphabet = set(model.alphabet)
    sep = "" if join else " "
    if words or trace or check:
        lines = [_argument_words(words)] if words else _stdin_lines(blocks(sys.stdin.buffer, on_read=on_input))
        return _apply_lines(pm, alphabet, lines, fmt, sep, trace, check, model.features)
    # Read, predict and write a block at a time: memory stays flat on any input, and
    # output starts before the input ends.
    read = blocks(sys.stdin.buffer, on_read=on_input)
    encoding = sys.stdout.encoding or ""
    applier = _block_applier_of(pm, alphabet, sep, fmt, encoding)
    if timeline is not None:
        timeline.mark("applier")
    shares: "Shares | None" = None
    if jobs == 1:
        done: Iterator["Applied"] = map(applier.apply, read)
    else:
        from fstsynth.block_pool import FORKS, Shares, map_blocks, map_file

        # A forked worker has this process's applier already; a spawned one reads the
        # model from its files (nothing of this process is shipped to it).
        make = functools.partial(_same, applier) if FORKS else functools.partial(
            _block_applier, model_dir, source, target, sep, fmt, encoding
        )
        # (UTF-8 output only: the line path's text is encoded a block at a time there,
        # which an encoding with a state, such as utf-8-sig's mark, would not survive.)
        utf8 = encoding.lower().replace("_", "-") in ("utf-8", "utf8")
        file = _regular_file(sys.stdin) if FORKS and utf8 else None
        if file is not None:  # the workers read their blocks from the file themselves
            shares = Shares() if os.environ.get(SHARES_VARIABLE) else None
            done = map_file(file, make, jobs, encoding=encoding, errors=sys.stdout.errors or "strict",
                            on_read=on_input, shares=shares, timeline=timeline)
        else:
            # The reading thread reads the pipe unbuffered: blocked in a buffered read it
            # would hold the buffer's lock, which the interpreter's exit (after Ctrl-C)
            # takes, and that ends in a fatal error (SIGABRT) instead of exit 130.
            raw = getattr(sys.stdin.buffer, "raw", sys.stdin.buffer)
            done = map_blocks(blocks(raw, on_read=on_input), make, jobs)
    unseen: Counter = Counter()
    tab_warned = False
    for applied in done:
        if applied.tab_line is not None and not tab_warned:
            tab_warned = True
            _warn_tab(applied.tab_line)
        unseen.update(applied.unseen)
        if applied.data:
            sys.stdout.flush()
            sys.stdout.buffer.write(applied.data)
        elif applied.text:
            sys.stdout.write(applied.text)
            sys.stdout.flush()
        if timeline is not None and jobs == 1:
            timeline.mark("written")
    if timeline is not None:
        timeline.mark("end")
    _warn_unseen(unseen, alphabet, model.features)
    if shares is not None:
        echo(f"fstsynth: apply --jobs {jobs}: {shares}", err=True)
    return 0


def _regular_file(stream: object) -> int | None:
    """The descriptor of `stream` if it is a regular file not read from yet (None: a
    pipe, a terminal, or no file at all)."""
    try:
        fd = stream.fileno()  # type: ignore[attr-defined]
        return fd if stat.S_ISREG(os.fstat(fd).st_mode) else None
    except (AttributeError, OSError, ValueError):
        return None


def _block_applier_of(pm: "PairModel", alphabet: set[str], sep: str, fmt: str, encoding: str) -> "BlockApplier":
    from fstsynth.stream import BlockApplier, lazy_splitter

    return BlockApplier(pm, alphabet, sep, fmt, encoding, lazy_splitter(alphabet))


def _same(applier: "BlockApplier") -> "BlockApplier":
    return applier


def _block_applier(
    model_dir: Path, source: str | None, target: str | None, sep: str, fmt: str, encoding: str
) -> "BlockApplier":
    """The block applier of a worker of `--jobs`: the model read from its files."""
    from fstsynth.model_file import load_model

    model = load_model(model_dir)
    return _block_applier_of(model.pair(source, target), set(model.alphabet), sep, fmt, encoding)


def _stdin_lines(read: Iterator) -> Iterator[List[str]]:
    """The words of blocks of lines (comments skipped, of a TSV line its source), a
    batch a block; the warning about a tab once."""
    from fstsynth.stream import source_lines

    warned = False
    for block in read:
        words, tab_line = source_lines(block.lines(), block.line + 1)
        if tab_line is not None and not warned:
            warned = True
            _warn_tab(tab_line)
        if words:
            yield words


def _warn_tab(line: int) -> None:
    warn(tab_warning("<stdin>", line))


def _apply_lines(
    pm: "PairModel", alphabet: set[str], batches: Iterator[List[str]] | List[List[str]], fmt: str, sep: str,
    trace: bool, check: bool, features: dict,
) -> int:
    """Predictions for batches of lines (words given as arguments, or with the trace or
    the check), printed a batch at a time."""
    from fstsynth.stream import lazy_splitter, predict_batches

    mismatches = []
    unseen: Counter = Counter()
    for batch in predict_batches(pm, batches, lazy_splitter(alphabet)):
        unseen.update(batch.unseen(alphabet))
        texts = batch.texts(sep)
        out = []
        for line, word, text, k in zip(batch.lines, batch.words, texts, range(len(texts))):
            out.append(f"{line}\t{text}" if fmt == "tsv" else text)
            if trace:
                from fstsynth.spe import derivation

                read, read_features = pm.reading(word, features)
                out.extend("  " + step for step in derivation(pm.program, read, read_features))
            if check:
                prediction = batch.predictions[k]
                interpreted = pm.interpret(word, features)
                if interpreted != prediction:
                    mismatches.append((word, prediction, interpreted))
        echo("\n".join(out))
    _warn_unseen(unseen, alphabet, features)
    for word, fst_out, interp in mismatches:
        echo(
            f"fstsynth: mismatch on {' '.join(word)!r}: transducer {' '.join(fst_out)!r}, "
            f"interpreter {' '.join(interp)!r}",
            err=True,
        )
    return MISMATCH if mismatches else 0


def _warn_unseen(unseen: Counter, alphabet: Iterable[str], features: "Features") -> None:
    from fstsynth.formatting import unseen_warning

    message = unseen_warning(unseen, alphabet, features)
    if message:
        warn(message)


def plain_apply(argv: Sequence[str]) -> int | None:
    """Run `fstsynth apply` without typer, when `argv` is a plain `apply` command line;
    its exit code, or None for anything else (then typer parses it, and prints help or
    usage errors).

    A plain command line: `apply`, then words, each an option of APPLY_OPTIONS (a flag,
    or followed by its value) or a positional word; the first positional word is the
    model directory and the rest are words. Any other form (`--help`, `--opt=value`,
    `--`, an unknown or incomplete option, a value typer would refuse, no model
    directory, global options before `apply`) is left to typer. As typer's global
    callback would, this keeps the memory limit (`FSTSYNTH_MEMORY_LIMIT`; its watchdog
    started once `WATCH_BYTES` says) and sets up logging."""
    if not argv or argv[0] != "apply":
        return None
    by_word = {decl: option for option in APPLY_OPTIONS for decl in option.decls}
    kwargs: dict[str, object] = {option.name: option.default for option in APPLY_OPTIONS}
    rest = list(argv[1:])
    values: list[str] = []
    while rest:
        word = rest.pop(0)
        if word.startswith("-") and len(word) > 1:
            if word not in by_word:
                return None
            option = by_word[word]
            if option.flag:
                kwargs[option.name] = True
                continue
            if not rest:
                return None
            try:
                value = option.type(rest.pop(0))
            except ValueError:
                return None  # typer names the option and the value
            if option.minimum is not None and value < option.minimum:  # type: ignore[operator]
                return None
            kwargs[option.name] = value
        else:
            values.append(word)
    if not values:
        return None
    timeline: "Timeline | None" = None
    if os.environ.get(TIMELINE_VARIABLE):
        from fstsynth.block_pool import Timeline

        timeline = Timeline(os.environ[TIMELINE_VARIABLE])
        timeline.mark("main")
    from fstsynth import fileio, guard

    fileio.log_to_stderr_when_needed()
    try:
        watchdog = _Watchdog(guard.limit_from_option(os.environ.get("FSTSYNTH_MEMORY_LIMIT")))
    except UserError as exc:
        return error(str(exc))
    model_dir = Path(values[0])
    if (not values[1:] and _file_bytes_left(sys.stdin) >= WATCH_BYTES) or _model_bytes(model_dir) >= WATCH_BYTES:
        # Started now, it starts on another core while this process imports and loads
        # the model; once the input is read (`input_read`), it would take a core from
        # the workers of `--jobs`. (The input's size first: the model's imports the model
        # reader, which then delayed the watchdog's start-up, 30-40 ms of CPU, to where
        # it held the core the first worker of `--jobs` started on.)
        watchdog.start()
        if timeline is not None:
            timeline.mark("watchdog")
    try:
        code = guarded(
            lambda: run_apply(model_dir, values[1:] or None, on_input=watchdog.input_read,
                              timeline=timeline, **kwargs)  # type: ignore[arg-type]
        )
        sys.stdout.flush()
        if timeline is not None:
            timeline.mark("flushed")
    finally:
        watchdog.stop()
    # The process ends next: its last garbage collection, at exit, would go through every
    # object of the model for nothing (a twentieth of a one-word apply's instructions).
    import gc

    gc.freeze()
    if timeline is not None:
        timeline.mark("exit")
        timeline.save()
    return code


#: `fstsynth apply` starts the memory watchdog (`fstsynth.guard`) once it has read this
#: many bytes of standard input, or before loading a model whose files are this large.
#: Until then its memory is bounded by a few megabytes of input and the model; and the
#: watchdog is a process of its own, whose start (~0.03 s on one core) would be a sixth
#: of a command on 100,000 words.
WATCH_BYTES = 1 << 22


def _file_bytes_left(stream: object) -> int:
    """The bytes `stream` has left to read if it is a regular file (0: not one)."""
    fd = _regular_file(stream)
    if fd is None:
        return 0
    try:
        return os.fstat(fd).st_size - os.lseek(fd, 0, os.SEEK_CUR)
    except OSError:
        return 0


def _model_bytes(directory: Path) -> int:
    """The size of the files loading the model in `directory` reads (0 where missing:
    loading reports that)."""
    from fstsynth.model_file import MODEL_JSON, MODEL_TABLES

    total = 0
    for name in (MODEL_JSON, MODEL_TABLES):
        try:
            total += (directory / name).stat().st_size
        except OSError:
            pass
    return total


class _Watchdog:
    """The memory watchdog of `apply` (`limit`: bytes, None for none), started on
    demand (`WATCH_BYTES`); with or without a limit it also makes a second Ctrl-C stop
    the command at once, as for every command."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.guard: "Guard | None" = None

    def start(self) -> None:
        if self.guard is None:
            from fstsynth import guard

            self.guard = guard.start(self.limit)

    def input_read(self, total: int) -> None:
        if total >= WATCH_BYTES:
            self.start()

    def stop(self) -> None:
        if self.guard is not None:
            self.guard.stop(wait=False)  # the process ends now: the watchdog ends on its own
