"""The progress reports reach the listener installed around a call, and no one else;
the command line draws them as a bar on a terminal, as lines elsewhere."""

import io

from fstsynth import console
from fstsynth.progress import Step, listening, report


def test_reports_reach_the_listener_only_inside_its_block():
    seen: list[Step] = []
    report("before")
    with listening(seen.append):
        report("compiling rule", 2, 5, "a -> b")
        with listening(lambda step: None):
            report("hidden from the outer listener")
        report("aligning")
    report("after")
    assert seen == [Step("compiling rule", 2, 5, "a -> b"), Step("aligning")]


# ---------------------------------------------------------------- drawing the reports


def _run(view: console.ProgressView, steps: list[Step], clock: list[float]) -> None:
    """Feed `steps` to `view`, the clock advancing by the seconds between them."""
    with listening(view):
        for step in steps:
            if isinstance(step, (int, float)):
                clock[0] += step
            else:
                report(step.stage, step.done, step.total, step.detail)


STEPS = [
    Step("column pair", 0, 2, "stem -> in stem"),
    Step("aligning", 0, 14),
    Step("aligning", 7, 14),
    Step("synthesizing pass 1"),
    Step("compiling rule", 1, 3, "∅ -> d a / _ #"),
    1.0,
    Step("compiling rule", 2, 3),
    12.0,
    Step("compiling rule", 3, 3),
    Step("column pair", 1, 2, "in stem -> stem"),
    Step("aligning", 0, 14),
    Step("column pair", 2, 2, "done"),
]


def test_plain_lines_say_where_the_run_is_at_most_every_interval(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(console.time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    view = console.ProgressView(out, terminal=False, interval=10.0, delay=0.0)
    _run(view, STEPS, clock)
    assert out.getvalue().splitlines() == [
        "fstsynth: [1/2] stem -> in stem  [0s]",
        # The stages of the first second are not written; rule 3/3, 13 s later, is. The
        # next column pair came within 10 s of that line.
        "fstsynth: [1/2] stem -> in stem: compiling rule 3/3  [13s]",
    ]


def test_a_burst_of_stages_through_a_pipe_is_one_line_per_interval(monkeypatch):
    """An 8.8 s `solve` once wrote about 200 lines: every new stage was a line."""
    clock = [0.0]
    monkeypatch.setattr(console.time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    view = console.ProgressView(out, terminal=False)
    burst: list = [Step("column pair", 0, 6, "stem -> plural")]
    for k in range(200):
        burst += [0.044, Step(("aligning", "cross-validating", "synthesizing pass 1", "compiling rule")[k % 4], k % 7)]
    _run(view, burst, clock)
    assert clock[0] > 8.7 and len(out.getvalue().splitlines()) == 1


def test_plain_lines_wait_out_the_delay(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(console.time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    view = console.ProgressView(out, terminal=False, delay=2.0)
    _run(view, STEPS[:6] + [1.5] + STEPS[6:], clock)  # the first reports come in the first second
    assert out.getvalue().splitlines()[0] == "fstsynth: [1/2] stem -> in stem: compiling rule 2/3  [2s]"


def test_the_terminal_bar_shows_pairs_stage_and_count():
    out = io.StringIO()
    view = console.ProgressView(out, terminal=True)
    view.start()
    try:
        with listening(view):
            report("column pair", 0, 2, "stem -> in stem")
            report("compiling rule", 2, 5, "∅ -> d a / _ #")
            view._bar.refresh()
    finally:
        view.stop()
    drawn = out.getvalue()
    assert "column pairs: stem -> in stem" in drawn and "0/2" in drawn
    assert "compiling rule (∅ -> d a / _ #)" in drawn and "2/5" in drawn


def test_quiet_installs_no_listener():
    seen: list[Step] = []
    with listening(seen.append):
        with console.showing_progress(quiet=True):
            report("aligning")
    assert seen == [Step("aligning")]
