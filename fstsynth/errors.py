"""Error classes shared by the pipeline.

`UserError` is the base of every error caused by what a user gave fstsynth (a file, a
word, an option). The CLI prints such errors as one line and exits with code 2. Any
other exception is a bug in fstsynth and keeps its traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """Something the user supplied is wrong; the message says what and where."""
