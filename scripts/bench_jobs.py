"""Parallel solve and apply: `fstsynth solve DEV --check --jobs N`, or with --apply
`fstsynth apply MODEL --jobs N < WORDS > FILE`, wall time for each N, outputs compared.

Runs the command line (a fresh process each time) on the dev split for every N in
--jobs, checks every answer file is byte-identical to the --jobs 1 run, and prints the
speed-up. With --baseline DIR (a checkout of another fstsynth version, e.g. made by
`git archive <commit> | tar -x -C DIR`), that version's `solve --check` is timed in the
same run as the reference for "before/after" (its answers are compared too, which tells
whether a speed change altered any answer).

The machine is shared: the load average before and after each run is recorded.

    python scripts/bench_jobs.py --jobs 1 2 --baseline /tmp/base --json /tmp/bench_jobs.json

With --apply WORDS: the model of bench_apply's scale row (spelling -> IPA, --scale
pairs of --lang, learned here) applied to WORDS random words (bench_apply's: token
frequencies and lengths of its source words), all-in (start-up, model, words, output
written to a file): the least (and the median) wall time of --repeat rounds, each
round running every N once (the machine is shared: a load that comes and goes weighs
on every N alike), and the median CPU time of all the command's processes; every output
compared byte for byte with --jobs 1's. --keep DIR keeps the model and the words there
for later runs. Since the wall time on a shared machine says more about the other work
than about the command, each run also reports (FSTSYNTH_JOBS_SHARES) the CPU of each
of its processes: the longest one's bounds the wall time on N idle cores, and the
CPU of --jobs 1 over it is the speed-up the command allows, whatever the load.

    python scripts/bench_jobs.py --apply 2000000 --jobs 1 2

--timeline (with --apply) also has each run write its timeline (FSTSYNTH_JOBS_TIMELINE:
each process's events with their times, `block_pool.Timeline`) and prints, for each N,
the medians over the rounds of when things happened, in milliseconds of wall time from
the moment the command was started (and the command's CPU milliseconds then): Python's
start-up and imports, the model read, the workers forked, the first and last blocks
made (by any process), the output written, the process's end, and its exit seen here;
and per process the time spent making blocks and waiting. --root DIR... (with --apply)
times other checkouts (`git archive` of a commit, C walker built) in the same rounds,
before/after figures under the same load; standard error goes to a file, as the
output does (a pipe's reader would also wait for the memory watchdog to exit).

    python scripts/bench_jobs.py --apply 2000000 --jobs 1 2 --timeline --root /tmp/main
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchutil import DEV, ROOT, table, write_json  # noqa: E402


def solve(code_dir: Path, problems: Path, out: Path, jobs: int | None) -> tuple[float, str, tuple]:
    cmd = [sys.executable, "-m", "fstsynth", "solve", str(problems), "--out", str(out), "--check"]
    if jobs is not None:
        cmd += ["--jobs", str(jobs)]
    env = dict(os.environ, PYTHONPATH=str(code_dir))
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=code_dir, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    last = (proc.stdout.strip().splitlines() or ["(no output)"])[-1]
    return seconds, f"exit {proc.returncode}: {last}", (load_before, os.getloadavg()[0])


def answers(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.glob("*"))}


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


#: The line `apply --jobs N` prints with FSTSYNTH_JOBS_SHARES set (`block_pool.Shares`).
SHARES = re.compile(r"CPU of the command ([0-9.]+) s, (\d+) blocks? \(([0-9.]+) s before the workers started\); "
                    r"of its workers: (.*)$", re.M)


def shares(stderr: str) -> tuple[float, float, list[float]] | None:
    """From `apply --jobs N`'s standard error: the command's CPU seconds, those before
    its workers started, and each worker's (None: no such line, as for --jobs 1)."""
    found = SHARES.search(stderr)
    if found is None:
        return None
    workers = [float(cpu) for cpu in re.findall(r"([0-9.]+) s, \d+ blocks?", found.group(4))]
    return float(found.group(1)), float(found.group(3)), workers


#: Milestones of the command's process (`--timeline`): its event and the name printed.
MILESTONES = (("main", "imports done"), ("watchdog", "watchdog started"), ("loaded", "model read"),
              ("applier", "applier made"), ("forked", "workers forked"))


def read_timeline(path: Path, spawned: float, reaped: float) -> dict[str, float]:
    """Where one run's wall time went (milliseconds from `spawned`, the moment the
    command was started; `reaped`: its exit seen here), from its timeline file."""
    events: dict[int, list[tuple[float, float, str, int]]] = {}
    for line in path.read_text().splitlines():
        fields = line.split("\t")
        events.setdefault(int(fields[0]), []).append(
            ((float(fields[1]) - spawned) * 1000, float(fields[2]) * 1000, fields[3], int(fields[4])))
    command = next(pid for pid, marks in events.items() if any(name == "main" for _, _, name, _ in marks))
    found: dict[str, float] = {}
    own = events[command]
    for event, label in MILESTONES:
        for at, cpu, name, _ in own:
            if name == event:
                found[label] = at
                found[label + " (CPU)"] = cpu
                break
    # A block's work: from its order (a worker) or "make" (the command) to "made"; with
    # one job, from the applier made or a block written to the next block written.
    one = not any(name == "forked" for _, _, name, _ in own)
    starts, ends, busy, waits = [], [], {}, {}
    for pid, marks in events.items():
        busy[pid] = waits[pid] = 0.0
        begun = waited = None
        for at, _, name, _ in marks:
            if waited is not None and name in ("order", "taken"):
                waits[pid] += at - waited  # (a worker waiting for an order, the command for a block)
            waited = at if name in ("wait", "read") else None
            if begun is not None and name == ("written" if one else "made"):
                starts.append(begun)
                ends.append(at)
                busy[pid] += at - begun
                begun = None
            if name in (("applier", "written") if one else ("order", "make")):
                begun = at
    found["first block begun"] = min(starts)
    found["last block made"] = max(ends)
    for at, cpu, name, _ in own:
        if name in ("written", "stopped", "end", "flushed", "exit"):
            label = {"written": "last written", "stopped": "workers ended"}.get(name, name)
            found[label] = at
            found[label + " (CPU)"] = cpu
    found["exit seen"] = (reaped - spawned) * 1000
    found["blocks: command"] = busy[command]
    found["waits: command"] = waits[command]
    for n, pid in enumerate(pid for pid in events if pid != command):
        found[f"blocks: worker {n + 1}"] = busy[pid]
        found[f"waits: worker {n + 1}"] = waits[pid]
        found[f"worker {n + 1} forked"] = events[pid][0][0]
        found[f"worker {n + 1} ended"] = events[pid][-1][0]
    return found


def apply_jobs(args: argparse.Namespace) -> None:
    """`fstsynth apply --jobs N` on args.apply random words (see the module docstring)."""
    from bench_apply import random_words, scale_problem

    from fstsynth.learning import learn_model
    from fstsynth.model_file import save_model

    lang, code = args.lang.split(":")
    roots = [ROOT, *args.root]
    with tempfile.TemporaryDirectory() as tmp:
        model_dir, words, out = Path(tmp) / "model", Path(tmp) / "words.txt", Path(tmp) / "out.txt"
        errors, events = Path(tmp) / "stderr.txt", Path(tmp) / "timeline.tsv"
        if args.keep:  # the model and the words made once, kept for the next runs
            model_dir, words = args.keep / "model", args.keep / f"words{args.apply}.txt"
            args.keep.mkdir(parents=True, exist_ok=True)
        if not (model_dir / "model.json").exists() or not words.exists():
            problem = scale_problem(args.scale, lang, code, args.seed)
            save_model(learn_model(problem, pairs=[(0, 1)]), model_dir)
            text = "".join(" ".join(w) + "\n" for w in random_words(problem, 0, args.apply, args.seed))
            words.write_text(text, encoding="utf-8")
        runs = [(root, jobs) for root in roots for jobs in args.jobs]
        results = {run: {"root": str(run[0]), "jobs": run[1], "seconds": [], "cpu": [], "longest": [], "before": [],
                         "load": [], "timeline": [], "identical": True} for run in runs}
        reference: bytes | None = None
        # Each round runs every N (and checkout) once: a load that comes and goes weighs on
        # all alike.
        for _ in range(args.repeat):
            for root, jobs in runs:
                env = dict(os.environ, PYTHONPATH=str(root), FSTSYNTH_JOBS_SHARES="1")
                env.pop("PYTHONDONTWRITEBYTECODE", None)  # (run with its bytecode cache, as installed)
                if args.timeline:
                    events.unlink(missing_ok=True)
                    env["FSTSYNTH_JOBS_TIMELINE"] = str(events)
                load_before, cpu_before = os.getloadavg()[0], _children_cpu()
                # (Standard error to a file, as output: a pipe's end would also wait for the
                # memory watchdog, which holds it too, to exit.)
                with words.open("rb") as stdin, out.open("wb") as stdout, errors.open("wb") as stderr:
                    spawned = time.monotonic()
                    proc = subprocess.run(
                        [sys.executable, "-m", "fstsynth", "apply", str(model_dir), "--jobs", str(jobs)],
                        stdin=stdin, stdout=stdout, stderr=stderr, env=env, cwd=root,
                    )
                    reaped = time.monotonic()
                r = results[root, jobs]
                r["seconds"].append(reaped - spawned)
                cpu = _children_cpu() - cpu_before
                r["cpu"].append(cpu)
                r["load"].append((load_before, os.getloadavg()[0]))
                said = errors.read_text(encoding="utf-8", errors="replace")
                if proc.returncode != 0:
                    raise RuntimeError(f"apply --jobs {jobs} exited {proc.returncode}: {said[-500:]}")
                split = shares(said)
                # The longest process's CPU: what bounds the wall time on N idle cores.
                r["longest"].append(cpu if split is None else max(split[0], *split[2]))
                r["before"].append(None if split is None else split[1])
                if args.timeline and events.exists():
                    r["timeline"].append(read_timeline(events, spawned, reaped))
                printed = out.read_bytes()
                reference = printed if reference is None else reference
                r["identical"] = r["identical"] and printed == reference
            print("done a round: " + ", ".join(
                f"{_name(run, roots)} {results[run]['seconds'][-1]:.2f}s (CPU {results[run]['cpu'][-1]:.2f}s, "
                f"longest {results[run]['longest'][-1]:.2f}s)" for run in runs), file=sys.stderr, flush=True)
    rows = []
    for run, r in results.items():
        first = results[run[0], args.jobs[0]]  # the same checkout's first N
        one, one_cpu = min(first["seconds"]), _median(first["cpu"])
        least, longest = min(r["seconds"]), _median(r["longest"])
        before = [b for b in r["before"] if b is not None]
        rows.append([_name(run, roots), least, _median(r["seconds"]), f"{one / least:.2f}x",
                     f"{_median(first['seconds']) / _median(r['seconds']):.2f}x", _median(r["cpu"]),
                     f"{_median(before):.2f}" if before else "-", longest, f"{one_cpu / longest:.2f}x",
                     "yes" if r["identical"] else "NO", " ".join(f"{a:.1f}" for a, _ in r["load"])])
    print(f"apply, {args.apply:,} words, {lang} spelling -> IPA model of {args.scale:,} pairs, output to a file; "
          f"{args.repeat} rounds ({os.cpu_count()} cores, shared machine: load average before each run). "
          f"Wall: least and median, and their speed-ups over --jobs {args.jobs[0]}. CPU (medians): all the "
          "command's processes; the command's before its workers started; the longest process's, and the bound "
          f"it sets on the speed-up (CPU of --jobs {args.jobs[0]} / longest process), whatever the load")
    print(table(["run", "wall s", "median s", "least", "median", "cpu s", "before s", "longest s", "bound",
                 "output = first", "load avg"], rows))
    if args.timeline:
        print_timelines(results, roots)
    write_json(args.json, {"benchmark": "apply jobs", "words": args.apply,
                           "results": [dict(r, root=str(r["root"])) for r in results.values()]})


def _name(run: tuple[Path, int], roots: list[Path]) -> str:
    """A run's name in the tables: its jobs, and its checkout if there are several."""
    root, jobs = run
    return f"--jobs {jobs}" + (f" ({root})" if len(roots) > 1 else "")


def print_timelines(results: dict[tuple[Path, int], dict], roots: list[Path]) -> None:
    """The medians of each run's timeline (`read_timeline`), a column per run."""
    timed = [(run, r["timeline"]) for run, r in results.items() if r["timeline"]]
    if not timed:
        return
    labels: list[str] = []
    for _, timelines in timed:
        labels += [label for label in timelines[0] if label not in labels]
    rows = [[label, *(f"{_median([t[label] for t in timelines if label in t]):.1f}"
                      if any(label in t for t in timelines) else "-" for _, timelines in timed)]
            for label in labels]
    print("Timeline, medians over the rounds: milliseconds of wall time from the command's start (CPU: the "
          "command's CPU milliseconds then); blocks and waits: milliseconds each process spent making blocks "
          "and waiting for a block or an order")
    print(table(["event", *(_name(run, roots) for run, _ in timed)], rows))


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problems", type=Path, default=DEV / "problems")
    parser.add_argument("--jobs", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--baseline", type=Path, help="another fstsynth checkout to time first")
    parser.add_argument("--json", default="bench_jobs.json")
    parser.add_argument("--apply", type=int, default=0, help="time `apply --jobs N` on this many words instead")
    parser.add_argument("--scale", type=int, default=1000, help="with --apply: training pairs of the model")
    parser.add_argument("--lang", default="es:spa-Latn", help="with --apply: LANG:EPITRAN of the model")
    parser.add_argument("--repeat", type=int, default=3, help="with --apply: runs per N; the least time counts")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--root", type=Path, nargs="*", default=[], help="with --apply: other checkouts (made "
                        "with `git archive`, C walker built) timed in the same rounds, outputs compared")
    parser.add_argument("--timeline", action="store_true", help="with --apply: print where each run's wall time "
                        "went (FSTSYNTH_JOBS_TIMELINE)")
    parser.add_argument("--keep", type=Path, help="with --apply: keep the model and the words in this directory "
                        "(made if missing) for later runs")
    args = parser.parse_args()
    if args.apply:
        apply_jobs(args)
        return

    rows, results = [], []
    with tempfile.TemporaryDirectory() as tmp:
        runs: list[tuple[str, Path, int | None]] = []
        if args.baseline:
            runs.append(("baseline", args.baseline, None))
        runs += [(f"jobs {n}", ROOT, n) for n in args.jobs]
        reference = None
        for name, code, jobs in runs:
            out = Path(tmp) / name.replace(" ", "")
            seconds, status, load = solve(code, args.problems, out, jobs)
            got = answers(out)
            if name == "jobs 1" or (reference is None and name != "baseline"):
                reference = got
            results.append({"run": name, "seconds": seconds, "status": status, "load": load, "answers": got})
            print(f"done {name}: {seconds:.1f}s ({status})", file=sys.stderr, flush=True)
        one = next(r["seconds"] for r in results if r["run"] == f"jobs {args.jobs[0]}")
        for r in results:
            same = r["answers"] == reference
            differ = sum(reference.get(k) != v for k, v in r["answers"].items()) if reference else 0
            verdict = "yes" if same else f"no ({differ} files)"
            rows.append([r["run"], r["seconds"], f"{one / r['seconds']:.2f}x", verdict,
                         f"{r['load'][0]:.1f} -> {r['load'][1]:.1f}", r["status"]])
            r["identical_to_jobs1"] = same
            r["differing_files"] = differ
            del r["answers"]
    print(f"solve --check on {args.problems} ({os.cpu_count()} cores, shared machine)")
    print(table(["run", "wall s", f"speed-up vs jobs {args.jobs[0]}", "answers = jobs 1", "load avg", "result"], rows))
    write_json(args.json, {"benchmark": "jobs", "results": results})


if __name__ == "__main__":
    main()
