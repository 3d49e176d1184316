"""`python -m fstsynth` runs the command line."""

from fstsynth.cli import app

app(prog_name="fstsynth")
