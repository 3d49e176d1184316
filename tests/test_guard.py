"""The command line's watchdog (`fstsynth.guard`): a memory ceiling that holds even
inside C++ (Pynini), and a second Ctrl-C that stops a command stuck in a library call.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fstsynth import guard
from fstsynth.cli import app
from fstsynth.errors import UserError

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
sys.path.insert(0, str(ROOT / "scripts"))

from stressutil import as_from_a_terminal, plural_rows, write_problem  # noqa: E402


def test_memory_limits_are_read_as_sizes():
    assert guard.parse_memory_limit("8G") == 8 << 30
    assert guard.parse_memory_limit("500M") == 500 << 20
    assert guard.parse_memory_limit("1.5GB") == int(1.5 * (1 << 30))
    assert guard.parse_memory_limit("none") is None and guard.parse_memory_limit("0") is None
    for bad in ("3x", "", "-1G", "10M"):
        with pytest.raises(UserError):
            guard.parse_memory_limit(bad)
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert guard.default_memory_limit() == int(physical * guard.DEFAULT_MEMORY_FRACTION)


def test_a_bad_memory_limit_is_one_line(tmp_path):
    result = CliRunner().invoke(app, ["--memory-limit", "3x", "show", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr == "fstsynth: error: --memory-limit: '3x' is not a size such as 8G, 500M or none\n"


def test_the_watchdog_ends_with_the_command_and_puts_the_signals_back():
    before = signal.getsignal(signal.SIGUSR1)
    g = guard.start(1 << 30)
    assert g.proc is not None and g.proc.poll() is None
    assert signal.getsignal(signal.SIGUSR1) != before
    g.stop()
    assert g.proc.returncode == 0
    assert signal.getsignal(signal.SIGUSR1) == before
    assert signal.set_wakeup_fd(-1) == -1  # no wake-up fd left behind


def test_over_the_memory_limit_learn_stops_with_one_line_and_keeps_the_previous_model(tmp_path):
    # Words up to 100 tokens: learning them needs well over 150 MB in a bare venv (words up
    # to 60 came to 146 MB there once learning got cheaper, and the run ended with exit 0).
    problem = write_problem(tmp_path / "big.json", plural_rows(__import__("random").Random(0), 60, 100))
    out = tmp_path / "model"
    out.mkdir()
    (out / "keep").write_text("previous")
    proc = subprocess.run(
        [sys.executable, "-m", "fstsynth", "--memory-limit", "150M", "learn", problem, "-o", out],
        cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=600, preexec_fn=as_from_a_terminal,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        "fstsynth: error: memory limit of 150.0 MB reached: stopped (--memory-limit sets the limit; "
        "see the Limits section of the README)"
    )
    assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.json", "model"]
    assert (out / "keep").read_text() == "previous"


SWALLOWED = textwrap.dedent(
    """
    import os, sys, time
    from fstsynth import guard
    page = os.sysconf("SC_PAGE_SIZE")
    with open("/proc/self/statm") as f:
        base = int(f.read().split()[1]) * page
    g = guard.start(base + (100 << 20))
    ballast = b"x" * (110 << 20)  # over the limit, under 1.25 times it: no kill at once
    swallowed = 0
    while not swallowed:
        try:
            time.sleep(0.01)
        except:  # noqa: E722 - as a library's bare except swallows the first stop
            swallowed += 1
    try:
        while True:
            time.sleep(0.01)  # the watchdog reminds the command, which stops now
    except guard.MemoryLimitExceeded:
        guard.acknowledge_stop()
        time.sleep(float(sys.argv[1]))  # stopping slowly, as on a loaded machine, using no CPU
        print("stopped; swallowed", swallowed, flush=True)
        sys.exit(2)
    """
)


def test_a_swallowed_stop_is_raised_again_and_a_slow_stop_on_a_busy_machine_is_not_killed():
    """The race behind learn's occasional SIGKILL: lingpy swallows the exception in a
    bare `except:` while it loads at import (just when learn's memory crosses a low
    limit), and the command went on until the watchdog killed it. And the grace to stop
    is CPU time: a wall-clock grace killed a clean stop on a loaded machine."""
    slow_stop = guard.GRACE_SECONDS + 1
    proc = subprocess.run(
        [sys.executable, "-c", SWALLOWED, str(slow_stop)], cwd=ROOT, env=ENV, capture_output=True, text=True,
        timeout=120,
    )
    assert (proc.returncode, proc.stdout) == (2, "stopped; swallowed 1\n"), proc.stderr


JUMP = textwrap.dedent(
    """
    import os, sys, time
    from fstsynth import guard
    ballast = b"x" * (130 << 20)
    page = os.sysconf("SC_PAGE_SIZE")
    with open("/proc/self/statm") as f:
        used = int(f.read().split()[1]) * page
    # The watchdog's first reading is 1.3 times the limit: what it saw after one call took
    # a command from under the limit to past 1.25 times it. (Allocating after the start
    # would not be deterministic: the pages fill one by one, and a reading in the middle
    # sees the rest of the filling as growth.)
    g = guard.start(int(used / 1.3))
    try:
        while True:
            time.sleep(0.01)
    except guard.MemoryLimitExceeded:
        guard.acknowledge_stop()
        time.sleep(float(sys.argv[1]))  # stopping, neither growing nor using CPU
        print("stopped", flush=True)
        g.stop()  # as the CLI does when a command ends
        sys.exit(2)
    """
)


def test_a_command_first_seen_past_the_kill_line_gets_to_stop_while_it_does_not_grow():
    """The race behind learn's SIGKILL under a 150 MB limit: one library call took it
    from under the limit to 192 MB, past 1.25 times the limit, between two readings,
    and the next reading killed it while it was stopping. Growth counts from the first
    reading over the limit. (Deterministic: the watchdog's first reading is over the
    limit, at 1.3 times it.)"""
    stopping = 1.0  # four readings of the watchdog
    proc = subprocess.run(
        [sys.executable, "-c", JUMP, str(stopping)], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "stopped\n", "")


GROWS_WHILE_STOPPING = textwrap.dedent(
    """
    import os, sys, time
    from fstsynth import guard
    page = os.sysconf("SC_PAGE_SIZE")
    with open("/proc/self/statm") as f:
        base = int(f.read().split()[1]) * page
    limit = base + (100 << 20)
    g = guard.start(limit)
    ballast = b"x" * (110 << 20)  # over the limit, under 1.25 times it: the watchdog asks
    try:
        while True:
            time.sleep(0.01)
    except guard.MemoryLimitExceeded:
        guard.acknowledge_stop()
        more = b"y" * (limit // 2)  # unwinding allocates: past the watchdog's kill line
        time.sleep(float(sys.argv[1]))  # stopping, using no CPU
        print("stopped", flush=True)
        g.stop()
        sys.exit(2)
    """
)


def test_a_command_that_grows_while_it_stops_by_itself_is_not_killed():
    """The growth kill is for a command stuck in a library call that allocates; one whose
    SIGUSR1 handler ran (it wrote to the watchdog's pipe) is stopping in Python, and may
    allocate as it unwinds. (Killed at the next reading before the handler wrote.)"""
    stopping = 1.0  # twenty readings of the watchdog
    proc = subprocess.run(
        [sys.executable, "-c", GROWS_WHILE_STOPPING, str(stopping)], cwd=ROOT, env=ENV, capture_output=True,
        text=True, timeout=120,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "stopped\n", "")


REMINDER_WHILE_STOPPING = textwrap.dedent(
    """
    import os, signal, sys
    from fstsynth import guard
    g = guard.start(1 << 40)
    waiting = g.proc.wait
    def reminded_while_waiting(timeout=None):
        os.kill(os.getpid(), signal.SIGUSR1)  # the watchdog's reminder, sent before it saw the pipe closed
        return waiting(timeout)
    g.proc.wait = reminded_while_waiting
    g.stop()
    print(signal.getsignal(signal.SIGUSR1) is signal.SIG_DFL, flush=True)
    """
)


def test_a_reminder_that_arrives_while_the_watchdog_stops_is_ignored():
    """stop() used to put SIGUSR1's default action back before the watchdog had exited:
    a reminder sent in that window ended the command with -SIGUSR1 instead of its own exit
    code (seen as -10 for the stopping command above, under load). After stop() the
    previous handler is back."""
    proc = subprocess.run(
        [sys.executable, "-c", REMINDER_WHILE_STOPPING], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=60
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "True\n", "")


CPP = textwrap.dedent(
    """
    import sys
    from fstsynth import fileio, guard
    fileio.watch_interrupts()
    g = guard.start(int(sys.argv[1]) << 20)
    import pynini
    print("ready", flush=True)
    if sys.argv[2] == "memory":
        sigma = pynini.union(*[chr(0x100 + i) for i in range(200)]).optimize()
        pynini.closure(sigma, 0, 3_000_000)  # one C++ call allocating gigabytes
    else:
        sum(range(10**12))  # minutes in one C call, deaf to Python's signal handler
    print("finished", flush=True)
    """
)


def run_stuck(kind: str, limit_mb: int) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", CPP, str(limit_mb), kind], cwd=ROOT, env=ENV, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=as_from_a_terminal,
    )
    assert proc.stdout.readline() == "ready\n"
    return proc


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_inside_the_call(pid: int) -> None:
    """Until the child has spent half a second of CPU after saying "ready": it is then
    in its long C call (a signal sent earlier could land before the call)."""
    start = cpu_seconds(pid)
    deadline = time.monotonic() + 120
    while cpu_seconds(pid) - start < 0.5:
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_over_the_memory_limit_inside_cpp_the_watchdog_stops_it():
    """OpenFst cannot be interrupted, and a failed allocation would abort: the watchdog
    kills the process soon after the limit and says why, in one line."""
    proc = run_stuck("memory", 300)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL
    assert "finished" not in out
    [line] = err.splitlines()
    assert line.startswith("fstsynth: error: memory limit of 300 MB reached (")
    assert line.endswith("in use) inside a library call: stopped (files being written were left as they "
                         "were; --memory-limit sets the limit)")
    in_use = float(line.split("(")[1].split()[0])  # MB or GB: killed well before gigabytes
    assert "MB in use" in line and in_use < 300 * 1.25 + 200


def test_a_second_ctrl_c_stops_a_long_library_call_at_once():
    proc = run_stuck("cpu", 100000)
    wait_inside_the_call(proc.pid)
    proc.send_signal(signal.SIGINT)
    proc.send_signal(signal.SIGINT)  # at once: the same press reaching a worker counts once
    time.sleep(1.5)
    assert proc.poll() is None  # the first press waits for the library call to return
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert err == "fstsynth: interrupted again: stopped at once (files being written were left as they were)\n"
