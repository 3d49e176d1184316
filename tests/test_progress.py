"""The progress reports reach the listener installed around a call, and no one else."""

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
