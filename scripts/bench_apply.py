"""Apply throughput: the compiled transducer's table walker vs the interpreter.

For each chosen column pair of the dev split, learn and compile its program once, save
it as a model directory, then predict N random words (seeded; token frequencies and word
lengths of the pair's source column):
  - tables:      `PairModel.predict_many` (per-pass tables: deterministic ones, or
                 bimachines for a program with a pass that is not subsequential), in-process,
                 cold (the first run builds the lazy product of the passes) and warm;
  - cli:         `python -m fstsynth apply MODEL < words.txt` on --cli-words words (the
                 N words, repeated), minus the same command's wall time on one word
                 (start-up: imports, model load, recompiling for the tables): on N words
                 alone the start-up's variation could exceed the fast pairs' work;
  - cascade:     `Compiled.apply` (the word composed with each pass transducer in turn,
                 shortest path), on a sample;
  - interpreter: `interpreter.run`, on a sample.
Every output on the samples is compared: tables == cascade == interpreter.
The process is pinned to one core. Targets: tables >= 100,000 words/s and >= 5x the
interpreter.

    python scripts/bench_apply.py --words 100000 --json /tmp/bench_apply.json
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchutil import DEV, ROOT, pin_one_core, rate, table, write_json  # noqa: E402

from fstsynth.compiler import TwoWayWalker  # noqa: E402
from fstsynth.interpreter import run  # noqa: E402
from fstsynth.model import learn_model  # noqa: E402
from fstsynth.problem import load_problem  # noqa: E402

DEFAULT_PAIRS = [
    "finnish_morphology:0:1",
    "turkish_tatar_multiling:0:1",
    "movima_morphology:1:0",
    "sanskrit_transliteration:0:1",
]


def random_words(problem, source: int, count: int, seed: int) -> list[tuple[str, ...]]:
    words = [row[source] for row in problem.cells if row[source]]
    freq = Counter(t for w in words for t in w)
    tokens, weights = zip(*sorted(freq.items()))
    lengths = [len(w) for w in words]
    rng = random.Random(seed)
    return [tuple(rng.choices(tokens, weights, k=rng.choice(lengths))) for _ in range(count)]


def cli_seconds(model_dir: Path, words_file: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "fstsynth", "apply", str(model_dir)],
        stdin=words_file.open("rb"),
        stdout=subprocess.DEVNULL,
        check=True,
        cwd=ROOT,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", nargs="*", default=DEFAULT_PAIRS, help="PROBLEM:SOURCE:TARGET of the dev split")
    parser.add_argument("--words", type=int, default=100_000, help="words through the tables and the CLI")
    parser.add_argument("--sample", type=int, default=5_000, help="words through the cascade and the interpreter")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default="bench_apply.json", help="where to write the figures")
    parser.add_argument("--no-cli", action="store_true", help="skip the command-line measurement")
    parser.add_argument(
        "--cli-words", type=int, default=500_000,
        help="words through the command line (the --words words, repeated)",
    )
    args = parser.parse_args()
    cpu = pin_one_core()

    rows, results = [], []
    for spec in args.pairs:
        name, s, t = spec.split(":")
        s, t = int(s), int(t)
        problem = load_problem(DEV / "problems" / f"{name}.json")
        model = learn_model(problem, pairs=[(s, t)])
        pm = model.pair(s, t)
        words = random_words(problem, s, args.words, args.seed)
        sample = words[: args.sample]

        started = time.perf_counter()
        pm.predict_many(words[:1])  # builds the tables
        build = time.perf_counter() - started
        started = time.perf_counter()
        fast = pm.predict_many(words)  # cold: the lazy product of the passes is built now
        t_tables = time.perf_counter() - started
        started = time.perf_counter()
        again = pm.predict_many(words)  # warm
        t_warm = time.perf_counter() - started
        assert again == fast

        started = time.perf_counter()
        cascade = [pm.predict(w) for w in sample]
        t_cascade = time.perf_counter() - started
        started = time.perf_counter()
        interp = [pm.interpret(w, model.features) for w in sample]  # the features the model learned with
        t_interp = time.perf_counter() - started
        mismatches = sum(
            not (f == c == i) for f, c, i in zip(fast[: len(sample)], cascade, interp)
        )

        t_cli = None
        if not args.no_cli:
            with tempfile.TemporaryDirectory() as tmp:
                model_dir = Path(tmp) / "model"
                model.save(model_dir)
                all_words = Path(tmp) / "words.txt"
                cli_words = [words[k % len(words)] for k in range(args.cli_words)]
                all_words.write_text("\n".join(" ".join(w) for w in cli_words) + "\n", encoding="utf-8")
                one_word = Path(tmp) / "one.txt"
                one_word.write_text(" ".join(words[0]) + "\n", encoding="utf-8")
                # The least of two runs each: the machine is shared.
                t_cli = min(cli_seconds(model_dir, all_words) for _ in range(2)) - min(
                    cli_seconds(model_dir, one_word) for _ in range(2)
                )

        r = {
            "pair": spec,
            "rules": pm.program.rule_count,
            "passes": len(pm.program.passes),
            "pass_states": sum(fst.num_states() for fst in pm.compiled.passes),
            # "deterministic": every pass determinized, walked as one lazy product;
            # "bimachine": a pass tests a tier to the right (not subsequential), so
            # each pass is walked twice (see compiler.TwoWayWalker).
            "tables": "bimachine" if isinstance(pm.compiled.walker, TwoWayWalker) else "deterministic",
            "build_tables_s": build,
            "tables_wps": rate(len(words), t_tables),
            "tables_warm_wps": rate(len(words), t_warm),
            "cli_words": args.cli_words if t_cli else None,
            "cli_wps": rate(args.cli_words, t_cli) if t_cli else None,
            "cascade_wps": rate(len(sample), t_cascade),
            "interpreter_wps": rate(len(sample), t_interp),
            "mismatches": mismatches,
            "compared": len(sample),
        }
        r["tables_vs_interpreter"] = r["tables_wps"] / r["interpreter_wps"]
        r["cli_vs_interpreter"] = r["cli_wps"] / r["interpreter_wps"] if r["cli_wps"] else None
        results.append(r)
        rows.append([
            spec + (" (bimachine)" if r["tables"] == "bimachine" else ""), r["rules"], r["pass_states"], round(build, 2), r["tables_wps"], r["tables_warm_wps"],
            r["cli_wps"] if r["cli_wps"] else "-", r["cascade_wps"], r["interpreter_wps"],
            f"{r['tables_vs_interpreter']:.1f}x",
            f"{r['cli_vs_interpreter']:.1f}x" if r["cli_vs_interpreter"] else "-",
            f"{mismatches}/{len(sample)}",
        ])
        print(f"done {spec}", file=sys.stderr, flush=True)

    print(
        f"apply throughput, words/s on one core (cpu {cpu}); {args.words:,} words, samples of "
        f"{args.sample:,}" + ("" if args.no_cli else f", {args.cli_words:,} through the command line")
    )
    print(table(
        ["pair", "rules", "states", "build s", "tables", "warm", "cli", "cascade", "interp", "tab/int", "cli/int", "mismatch"],
        rows,
    ))
    write_json(args.json, {"benchmark": "apply", "words": args.words, "sample": args.sample, "cpu": cpu, "results": results})


if __name__ == "__main__":
    main()
