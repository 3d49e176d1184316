"""A watchdog for command-line runs: a memory ceiling, and a Ctrl-C that stops even a
long library call.

Public API:
    DEFAULT_MEMORY_FRACTION, parse_memory_limit(text) -> int | None,
    default_memory_limit() -> int | None, format_bytes(n) -> str
    MemoryLimitExceeded
    Guard, start(limit) -> Guard, Guard.stop(), limit_from_option(text) -> int | None,
    acknowledge_stop()

Why a separate process: Pynini and OpenFst allocate in C++ and hold the interpreter lock
for whole operations (measured: a Python thread got no turn for up to a second during
one compilation; a determinization can run for minutes), and a failed C++ allocation
aborts the process (`std::bad_alloc`, SIGABRT) rather than raising MemoryError. So a
thread watching memory would be silent exactly when it matters, and an address-space
rlimit gives a core dump, not a message. The watchdog is a small Python process (no
imports beyond the standard library) that reads the memory of the command and its worker
processes from /proc twenty times a second (a C++ call can allocate a gigabyte a second;
read four times a second, one went from 300 MB to 582 MB between two readings), and
finds those processes four times a second:

- over the limit, it sends SIGUSR1: the command raises MemoryLimitExceeded at its next
  Python step and stops with one line, exit code 2, its temporaries removed. While the
  command stays over the limit it sends SIGUSR1 again every second: a library's bare
  `except:` can swallow the exception (lingpy loads its sound-class models at import
  inside one, and builds them again when loading "fails"), and the command would then
  go on until killed. A reminder raises again unless the command is already stopping (a
  MemoryLimitExceeded being handled, or `acknowledge_stop` called);
- still over it after 3 s of the command's CPU time (stuck in C++), or 30 s later
  (stuck at all), or still growing (past 1.25 times the limit and a quarter of the limit
  more than when it was first seen over it) without having run its SIGUSR1 handler (which
  writes a byte to the watchdog's pipe: the command is in Python, stopping, and may grow
  as it unwinds), it prints the line itself and kills the
  command and its workers (SIGKILL: the hidden temporaries left are removed by the next
  run writing the same path). The grace is counted in CPU time because a command
  stopping by itself (unwinding, removing its temporaries, collecting garbage) needs
  that much CPU however busy the machine is: counted in wall time, a loaded machine
  turned a clean stop into a kill. Growth is counted from the first sight because one
  library call can take the command from under the limit to past 1.25 times it between
  two readings (learn under a 150 MB limit: 192 MB at the first reading); killed at the
  next reading, such a command had a quarter of a second to stop, and a clean stop
  became a kill.

Python's signal wake-up fd tells the watchdog of every signal the command receives, even
while the command is inside C++ and cannot run its handler: a second Ctrl-C (a second or
more after the first: one press reaches the command and each of its worker processes)
while the command is still running stops it at once the same way ("interrupted again").

The watchdog exits when the command does (its end of a pipe closes). Linux only (it
reads /proc); elsewhere `start` does nothing.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import threading
from typing import Any

from fstsynth.errors import UserError
from fstsynth.fileio import logger

#: Default ceiling: this share of the machine's physical memory, for the command and its
#: worker processes together.
DEFAULT_MEMORY_FRACTION = 0.5
#: CPU seconds the command (with its workers) gets to stop by itself once over the limit.
GRACE_SECONDS = 3.0
#: Wall seconds it gets, however little CPU it was given or used.
GRACE_WALL_SECONDS = 30.0
#: How often the watchdog reads the memory of the processes it watches; and how often it
#: finds them (all of /proc: the costly part).
LOOK_SECONDS = 0.05
TREE_SECONDS = 0.25
#: The byte the command writes to the watchdog's pipe when its SIGUSR1 handler runs (no
#: signal has this number): it is in Python, not stuck in a library call.
_ACKNOWLEDGED = 255


class MemoryLimitExceeded(BaseException):
    """Raised in the command when the watchdog finds it over its memory limit.

    A BaseException, like KeyboardInterrupt, so that no `except Exception` on the way
    turns it into another error."""


def format_bytes(n: float) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n / 1024:.0f} kB"


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)


def parse_memory_limit(text: str) -> int | None:
    """`8G`, `500M`, `1.5GB`, `2000000000` (bytes), or `0`/`none` for no limit."""
    if text.strip().lower() in ("0", "none", "off", "no"):
        return None
    match = _SIZE.match(text)
    if not match:
        raise UserError(f"--memory-limit: {text!r} is not a size such as 8G, 500M or none")
    scale = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[match[2].lower()]
    value = int(float(match[1]) * scale)
    if value < 50 << 20:
        raise UserError(f"--memory-limit: {text!r} is too small to run fstsynth at all (at least 50M)")
    return value


def default_memory_limit() -> int | None:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") * DEFAULT_MEMORY_FRACTION)
    except (ValueError, OSError, AttributeError):
        return None


# The watchdog: standard library only, started with -I -S (no site-packages: quick).
_WATCHDOG = r"""
import os, select, signal, sys, time
pid, limit, fd = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
grace, grace_wall = float(sys.argv[4]), float(sys.argv[5])
signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is the command's to handle
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # (blocked from its start until now)
me = os.getpid()
page = os.sysconf("SC_PAGE_SIZE")
TICK, TREE_EVERY, ACK = float(sys.argv[6]), float(sys.argv[7]), bytes([int(sys.argv[8])])

def tree():
    kids = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/" + name + "/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            kids.setdefault(ppid, []).append(int(name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        if p != me:
            out.append(p)
            todo.extend(kids.get(p, ()))
    return out

def rss(pids):
    total = 0
    for p in pids:
        try:
            with open("/proc/%d/statm" % p, "rb") as f:
                total += int(f.read().split()[1]) * page
        except (OSError, ValueError, IndexError):
            pass
    return total

def cpu(pids):
    total = 0
    for p in pids:
        try:
            with open("/proc/%d/stat" % p, "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, ValueError, IndexError):
            pass
    return total / ticks

ticks = os.sysconf("SC_CLK_TCK")

def gb(n):
    return "%.1f GB" % (n / 2**30) if n >= 2**30 else "%.0f MB" % (n / 2**20)

def stop(message):
    os.write(2, ("fstsynth: " + message + "\n").encode())
    for p in tree():
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    sys.exit(0)

asked = asked_cpu = reminded = growing = None
acknowledged = False  # the command ran Python since it was asked to stop
first_interrupt = None
pids, tree_read = [], 0.0
while True:
    ready, _, _ = select.select([fd], [], [], TICK)
    if ready:
        data = os.read(fd, 256)
        if not data:
            sys.exit(0)  # the command has exited
        if ACK in data:
            acknowledged = True
        if bytes([signal.SIGINT]) in data:
            # One Ctrl-C reaches the command and each of its worker processes (they all
            # write here): presses less than a second apart count as one.
            now = time.monotonic()
            if first_interrupt is None:
                first_interrupt = now
            elif now - first_interrupt > 1.0:
                stop("interrupted again: stopped at once (files being written were left as they were)")
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit(0)
    now = time.monotonic()
    if now - tree_read >= TREE_EVERY:  # (the whole of /proc: read less often than the sizes)
        pids, tree_read = tree(), now
    used = rss(pids)
    if used > limit:
        if asked is None:
            pids = tree()
            used = rss(pids)
            asked = reminded = now
            asked_cpu = cpu(pids)
            growing = max(1.25 * limit, used + 0.25 * limit)
            os.kill(pid, signal.SIGUSR1)
        elif (cpu(pids) - asked_cpu > grace or now - asked > grace_wall
              or (used > growing and not acknowledged)):
            stop("error: memory limit of %s reached (%s in use) inside a library call: stopped "
                 "(files being written were left as they were; --memory-limit sets the limit)"
                 % (gb(limit), gb(used)))
        elif now - reminded >= 1.0:
            reminded = now
            os.kill(pid, signal.SIGUSR1)
"""


class _Process:
    """The watchdog's process: `poll`, `wait` and `kill` as `subprocess.Popen`'s (`wait`
    gives None where `timeout` passed). It is started by `os.posix_spawn`: importing
    `subprocess` and forking a process that holds a model were on `apply`'s critical
    path, before its worker processes can start."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    @classmethod
    def spawn(cls, argv: list[str], keep_fd: int) -> "_Process":
        """`argv` run with standard input and output on /dev/null and `keep_fd` open.
        It is born with Ctrl-C blocked (a blocked signal stays blocked across exec)
        until it ignores it: a Ctrl-C while it started killed it with a traceback."""
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, ()) | {signal.SIGINT}
        os.set_inheritable(keep_fd, True)  # (this process closes it once the child has it)
        devnull = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                   (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)]
        return cls(os.posix_spawn(argv[0], argv, os.environ, file_actions=devnull, setsigmask=blocked))

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # (reaped elsewhere: its status is lost, as Popen takes it)
                pid, status = self.pid, 0
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                return None
            time.sleep(0.002)
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


_stopping = False


def acknowledge_stop() -> None:
    """The command has caught MemoryLimitExceeded and is ending: the watchdog's reminders
    no longer raise it (they would cut the ending short)."""
    global _stopping
    _stopping = True


class Guard:
    """A running watchdog; `stop()` ends it and puts the signal set-up back."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.proc: _Process | None = None
        self._write_fd: int | None = None
        self._saved: list[Any] = []

    def _start(self) -> None:
        if not os.path.isdir("/proc/self") or threading.current_thread() is not threading.main_thread():
            return
        read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)
        limit = self.limit if self.limit is not None else 1 << 62
        try:
            self.proc = _Process.spawn(
                [sys.executable, "-I", "-S", "-c", _WATCHDOG, str(os.getpid()), str(limit), str(read_fd),
                 str(GRACE_SECONDS), str(GRACE_WALL_SECONDS), str(LOOK_SECONDS), str(TREE_SECONDS),
                 str(_ACKNOWLEDGED)],
                read_fd,
            )
        except OSError as exc:
            logger(__name__).warning("no memory watchdog: %s", exc)
            os.close(write_fd)
            return
        finally:
            os.close(read_fd)
        self._write_fd = write_fd
        self._saved = [
            signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False),
            signal.signal(signal.SIGUSR1, self._over_limit),
        ]

    def _over_limit(self, signum: int, frame: Any) -> None:
        if self._write_fd is not None:
            try:
                os.write(self._write_fd, bytes([_ACKNOWLEDGED]))
            except OSError:
                pass  # (the pipe is full: the watchdog has yet to read earlier signals)
        if _stopping or isinstance(sys.exc_info()[1], MemoryLimitExceeded):
            return  # a reminder while the command stops (in an `except`, `finally` or `__exit__`)
        limit = format_bytes(self.limit or 0)
        raise MemoryLimitExceeded(
            f"memory limit of {limit} reached: stopped (--memory-limit sets the limit; see the "
            "Limits section of the README)"
        )

    def stop(self, wait: bool = True) -> None:
        """Stop watching. `wait=False`: do not wait for the watchdog to exit (it does as
        soon as it sees the pipe closed); for a process about to exit, which would
        otherwise wait for the watchdog's own start-up to finish (0.1 s under load); SIGUSR1
        then stays ignored, so a last reminder cannot end the process."""
        if self._write_fd is None:
            return
        wakeup, usr1 = self._saved
        signal.set_wakeup_fd(wakeup)
        # A reminder the watchdog sends before it sees the pipe closed must neither raise
        # MemoryLimitExceeded inside stop() nor meet SIGUSR1's default action (which ends
        # the process): it is ignored until the watchdog has exited.
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)
        os.close(self._write_fd)
        self._write_fd = None
        if self.proc is None or not wait:
            return  # the process ends now: SIGUSR1 stays ignored
        if self.proc.wait(timeout=5) is None:
            self.proc.kill()
            self.proc.wait()
        signal.signal(signal.SIGUSR1, usr1)


def start(limit: int | None) -> Guard:
    """Start a watchdog over this process and its children (a limit of None: only the
    second-Ctrl-C stop). Call from the main thread; `Guard.stop()` when done."""
    global _stopping
    _stopping = False  # a previous command in this process may have stopped
    guard = Guard(limit)
    guard._start()
    return guard


def limit_from_option(text: str | None) -> int | None:
    """The limit given as `--memory-limit` text (None: the default)."""
    return default_memory_limit() if text is None else parse_memory_limit(text)


def start_from_option(text: str | None) -> Guard:
    """`start` with the limit given as `--memory-limit` text (None: the default)."""
    return start(limit_from_option(text))
