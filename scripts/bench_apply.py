"""Apply speed: `fstsynth apply` against HFST's and foma's lookup on the same model.

For each model (column pairs of the dev split, learned here with the default options;
and a model learned from --scale spelling -> IPA pairs, as `bench_scale.py` makes them),
the model is saved, exported by fstsynth (`export --format att`, its passes composed;
if that composition is refused as too large, the pass files of `--passes` composed by
HFST and foma themselves), and N random words (seeded; token frequencies and word
lengths of the source column's words: nearly all distinct, so nothing gains from
repeated words) are run through
  - fstsynth:  `python -m fstsynth apply MODEL < words` (tokens separated by spaces);
  - HFST:      `hfst-optimized-lookup` on the export (hfst-txt2fst, hfst-fst2fst -O);
  - foma:      `flookup -i -x` on the export (foma `read att`, `save stack`);
each as a whole command, all-in (start-up, loading the model, the words, writing the
outputs), and on one word: its start-up. words/s = N / (all-in - start-up). The tools
read the words unspaced (they split them into the longest symbols they know); their
outputs are compared with fstsynth's, and so are, in-process, the apply tables against
the interpreter and the transducers (the reference path) on samples.
Each timing is the least of --repeat runs, the process pinned to one core: the machine
is shared. Python runs with its bytecode cache, as an installed package does (the
first run writes it). Targets: one word all-in <= 0.3 s; N words all-in no slower than
HFST.

    python scripts/bench_apply.py --words 100000 --json /tmp/bench_apply.json
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchutil import DEV, ROOT, pin_one_core, rate, table, write_json  # noqa: E402

from fstsynth.learning import learn_model  # noqa: E402
from fstsynth.model_file import save_model  # noqa: E402
from fstsynth.problem import Problem, load_problem  # noqa: E402

DEFAULT_PAIRS = [
    "finnish_morphology:0:1",
    "turkish_tatar_multiling:0:1",
    "movima_morphology:1:0",
    "sanskrit_transliteration:0:1",
    "minangkabau_multiling:0:1",
]
TOOLS = ("hfst-txt2fst", "hfst-fst2fst", "hfst-optimized-lookup", "hfst-compose", "foma", "flookup")


def random_words(problem: Problem, source: int, count: int, seed: int) -> list[tuple[str, ...]]:
    words = [row[source] for row in problem.cells if row[source]]
    freq = Counter(t for w in words for t in w)
    tokens, weights = zip(*sorted(freq.items()))
    lengths = [len(w) for w in words]
    rng = random.Random(seed)
    return [tuple(rng.choices(tokens, weights, k=rng.choice(lengths))) for _ in range(count)]


def scale_problem(size: int, lang: str, code: str, seed: int) -> Problem:
    """The training pairs of bench_scale's model of `size` pairs, as a problem."""
    from bench_scale import make_pairs

    pairs = make_pairs(lang, code, size + 2000, seed)[2000:]  # bench_scale holds out 2,000
    with tempfile.TemporaryDirectory() as tmp:
        tsv = Path(tmp) / f"{lang}{size}.tsv"
        tsv.write_text("".join(f"{' '.join(a)}\t{' '.join(b)}\n" for a, b in pairs[:size]), encoding="utf-8")
        return load_problem(tsv)


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(
    command: list[str], stdin: Path, cwd: Path, env: dict[str, str] | None = None
) -> tuple[float, float, bytes]:
    """(wall seconds, CPU seconds (user + system), standard output) of one run."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    with stdin.open("rb") as handle:
        proc = subprocess.run(command, stdin=handle, capture_output=True, cwd=cwd, env=env, check=False)
    took = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    return took, _children_cpu() - cpu_before, proc.stdout


def best(
    command: list[str], stdin: Path, cwd: Path, repeat: int, env: dict[str, str] | None = None
) -> tuple[float, float, bytes]:
    """The least wall time and the least CPU time of `repeat` runs, and the first output."""
    runs = [timed(command, stdin, cwd, env) for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs), runs[0][2]


def lookup_outputs(printed: bytes, count: int) -> list[str | None]:
    """Outputs of hfst-optimized-lookup / flookup -x: one block per word, its lines
    `input<TAB>output[<TAB>weight]` (hfst) or `output` (flookup -x); `+?`: none."""
    text = printed.decode("utf-8")
    # Only the last block's separator is dropped: an empty output is a block too
    # (flookup -x prints an empty line for it), first or last included.
    blocks = text[:-2].split("\n\n") if text.endswith("\n\n") else text.split("\n\n")
    out: list[str | None] = []
    for block in blocks:
        line = block.split("\n")[0]
        fields = line.split("\t")
        output = fields[1] if len(fields) >= 2 else fields[0]
        out.append(None if output.endswith("+?") else output)
    return out + [None] * (count - len(out))


def _stage_order(path: Path) -> tuple[int, ...]:
    """`model.pass2.1.att` -> (2, 1), `model.pass2.att` -> (2,): the order the stages
    apply in."""
    parts = path.name.split(".")[1:-1]  # between `model` and `att`
    return tuple(int(x.removeprefix("pass")) for x in parts)


def export_for_tools(model_dir: Path, work: Path, env: dict[str, str], root: Path = ROOT) -> tuple[Path, Path, str]:
    """The model exported by fstsynth and compiled for HFST (optimized lookup) and foma:
    (hfstol file, fomabin file, how). The composed AT&T export, or, if fstsynth refuses
    to compose (too large), its stage files composed by HFST and by foma themselves."""
    base = [sys.executable, "-m", "fstsynth", "export", str(model_dir), "-f", "att"]
    att = work / "model.att"
    composed = subprocess.run([*base, "-o", str(att)], capture_output=True, cwd=root, env=env).returncode == 0
    if composed:
        stages = [att]
    else:
        subprocess.run([*base, "--passes", "-o", str(att)], capture_output=True, cwd=root, env=env, check=True)
        stages = sorted(work.glob("model.pass*.att"), key=_stage_order)
    for k, stage in enumerate(stages):
        subprocess.run(["hfst-txt2fst", "-i", str(stage), "-o", f"s{k}.hfst"], check=True, cwd=work)
    current = "s0.hfst"
    for k in range(1, len(stages)):
        subprocess.run(["hfst-compose", "-1", current, "-2", f"s{k}.hfst", "-o", f"c{k}.hfst"], check=True, cwd=work)
        current = f"c{k}.hfst"
    hfstol, fomabin = work / "model.hfstol", work / "model.fomabin"
    subprocess.run(["hfst-fst2fst", "-O", "-i", current, "-o", str(hfstol)], check=True, cwd=work)
    lines = [f"read att {stage}\ndefine S{k};" for k, stage in enumerate(stages)]
    lines += ["regex " + " .o. ".join(f"S{k}" for k in range(len(stages))) + ";", f"save stack {fomabin}", ""]
    (work / "load.foma").write_text("\n".join(lines), encoding="utf-8")
    subprocess.run(["foma", "-f", "load.foma"], capture_output=True, check=True, cwd=work)
    return hfstol, fomabin, "composed by fstsynth" if composed else "stages composed by HFST and foma"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", nargs="*", default=DEFAULT_PAIRS, help="PROBLEM:SOURCE:TARGET of the dev split")
    parser.add_argument(
        "--scale", type=int, default=1000, help="also a model learned from this many spelling -> IPA pairs (0: none)"
    )
    parser.add_argument(
        "--lang", nargs="+", default=["es:spa-Latn"],
        help="scale models: LANG:EPITRAN each (wordfreq language, epitran code), e.g. es:spa-Latn it:ita-Latn",
    )
    parser.add_argument(
        "--root", type=Path, nargs="+", default=[ROOT],
        help="fstsynth source trees whose `apply` is timed, one after another on each model "
        "(default: this one; another checkout too gives before/after figures back to back on the "
        "same models and words); the first one exports for the tools",
    )
    parser.add_argument("--words", type=int, default=100_000, help="words through each command")
    parser.add_argument("--sample", type=int, default=2_000, help="words through the interpreter and the transducers")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command; the least time counts")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-tools", action="store_true", help="skip HFST and foma")
    parser.add_argument("--json", default="bench_apply.json", help="where to write the figures")
    args = parser.parse_args()
    cpu = pin_one_core()
    tools = not args.no_tools and all(shutil.which(t) for t in TOOLS)
    if not args.no_tools and not tools:
        print("HFST or foma not installed (Debian packages hfst foma): their columns are skipped", file=sys.stderr)
    roots = [r.resolve() for r in args.root]
    envs = [dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")) for root in roots]
    for env in envs:
        env.pop("PYTHONDONTWRITEBYTECODE", None)

    specs: list[tuple[str, Problem, int, int]] = []
    for spec in args.pairs:
        name, s, t = spec.split(":")
        specs.append((spec, load_problem(DEV / "problems" / f"{name}.json"), int(s), int(t)))
    for scale in args.lang if args.scale else ():
        lang, code = scale.split(":")
        problem = scale_problem(args.scale, lang, code, args.seed)
        specs.append((f"{lang} spelling->IPA, {args.scale:,} pairs", problem, 0, 1))

    rows, results = [], []
    for spec, problem, s, t in specs:
        started = time.perf_counter()
        model = learn_model(problem, pairs=[(s, t)])
        learn_s = time.perf_counter() - started
        pm = model.pair(s, t)
        words = random_words(problem, s, args.words, args.seed)
        sample = words[: args.sample]
        started = time.perf_counter()
        fast = pm.predict_many(words)
        tables_s = time.perf_counter() - started
        interp = [pm.interpret(w, model.features) for w in sample]
        reference = [pm.transduce(w) for w in sample[:200]]
        mismatches = sum(f != i for f, i in zip(fast, interp)) + sum(f != r for f, r in zip(fast, reference))
        r = {
            "model": spec,
            "rules": pm.program.rule_count,
            "passes": len(pm.program.passes),
            "stages": [f.num_states() for f in pm.transducers().stages],
            "compile_s": pm.seconds.get("compilation"),
            "learn_s": learn_s,
            "tables_wps": rate(len(words), tables_s),
            "mismatches_in_process": mismatches,
        }
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            model_dir = work / "model"
            save_model(model, model_dir)
            (work / "words.txt").write_text("\n".join(" ".join(w) for w in words) + "\n", encoding="utf-8")
            (work / "one.txt").write_text(" ".join(words[0]) + "\n", encoding="utf-8")
            (work / "plain.txt").write_text("\n".join("".join(w) for w in words) + "\n", encoding="utf-8")
            (work / "plain1.txt").write_text("".join(words[0]) + "\n", encoding="utf-8")
            command = [sys.executable, "-m", "fstsynth", "apply", str(model_dir)]
            ours = [" ".join(x) for x in fast]
            r["fstsynth"] = []
            mismatches_cli = 0
            for root, env in zip(roots, envs):
                timed(command, work / "one.txt", root, env)  # writes the bytecode cache
                one, one_cpu, _ = best(command, work / "one.txt", root, args.repeat, env)
                everything, everything_cpu, printed = best(command, work / "words.txt", root, args.repeat, env)
                r["fstsynth"].append({
                    "root": str(root), "one_word_s": one, "all_in_s": everything,
                    "wps": rate(len(words), everything - one), "one_word_cpu_s": one_cpu,
                    "all_in_cpu_s": everything_cpu,
                })
                mismatches_cli += sum(a != b for a, b in zip(printed.decode().splitlines(), ours))
            r["mismatches_cli"] = mismatches_cli
            if tools:
                hfstol, fomabin, how = export_for_tools(model_dir, work, envs[0], roots[0])
                r["export"] = how
                r["export_att_bytes"] = sum(p.stat().st_size for p in work.glob("model*.att"))
                joined = ["".join(x) for x in fast]
                for tool, cmd in (
                    ("hfst", ["hfst-optimized-lookup", "-q", str(hfstol)]),
                    ("foma", ["flookup", "-i", "-x", str(fomabin)]),
                ):
                    t1, t1_cpu, _ = best(cmd, work / "plain1.txt", work, args.repeat)
                    tn, tn_cpu, out = best(cmd, work / "plain.txt", work, args.repeat)
                    got = lookup_outputs(out, len(words))
                    r[tool] = {
                        "one_word_s": t1, "all_in_s": tn, "wps": rate(len(words), tn - t1),
                        "one_word_cpu_s": t1_cpu, "all_in_cpu_s": tn_cpu,
                        "differ": sum(g != e for g, e in zip(got, joined)),
                    }
        results.append(r)
        theirs: list[object] = []
        for tool in ("hfst", "foma"):
            found = r.get(tool)
            theirs += (
                [found["one_word_s"], found["all_in_s"], found["all_in_cpu_s"], found["wps"], found["differ"]]
                if found else ["-"] * 5
            )
        for k, ours_t in enumerate(r["fstsynth"]):
            label = spec if len(roots) == 1 else f"{spec} [{k + 1}]"
            rows.append([label, r["rules"], sum(r["stages"]), r["compile_s"], r["tables_wps"],
                         ours_t["one_word_s"], ours_t["all_in_s"], ours_t["all_in_cpu_s"], ours_t["wps"],
                         *theirs, r["mismatches_in_process"] + r["mismatches_cli"]])
        print(f"done {spec}", file=sys.stderr, flush=True)

    print(
        f"apply, {args.words:,} words through each command (all-in: start-up, model, words, output), "
        f"one core (cpu {cpu}), least of {args.repeat} runs; 1w = one word all-in (wall s); all-in: wall s, "
        f"cpu: its CPU s (user + system); load {os.getloadavg()[0]:.1f}"
    )
    for k, root in enumerate(roots, start=1):
        print(f"[{k}] fstsynth from {root}" if len(roots) > 1 else f"fstsynth from {root}")
    print(table(
        ["model", "rules", "states", "compile s", "tables w/s",
         "fstsynth 1w", "all-in", "cpu", "w/s", "hfst 1w", "all-in", "cpu", "w/s", "differ",
         "foma 1w", "all-in", "cpu", "w/s", "differ", "mismatch"],
        rows,
    ))
    write_json(args.json, {"benchmark": "apply", "words": args.words, "cpu": cpu, "results": results})


if __name__ == "__main__":
    main()
