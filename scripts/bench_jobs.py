"""Parallel solve: `fstsynth solve DEV --check --jobs N` wall time for each N, answers compared.

Runs the command line (a fresh process each time) on the dev split for every N in
--jobs, checks every answer file is byte-identical to the --jobs 1 run, and prints the
speed-up. With --baseline DIR (a checkout of another fstsynth version, e.g. made by
`git archive <commit> | tar -x -C DIR`), that version's `solve --check` is timed in the
same run as the reference for "before/after" (its answers are compared too, which tells
whether a speed change altered any answer).

The machine is shared: the load average before and after each run is recorded.

    python scripts/bench_jobs.py --jobs 1 2 --baseline /tmp/base --json /tmp/bench_jobs.json
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problems", type=Path, default=DEV / "problems")
    parser.add_argument("--jobs", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--baseline", type=Path, help="another fstsynth checkout to time first")
    parser.add_argument("--json", default="bench_jobs.json")
    args = parser.parse_args()

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
