"""Types of the optional compiled walker (fstsynth/_walk.c; see its docstring)."""

from typing import Mapping, Sequence

class Walker:
    def __init__(
        self, tokens: Sequence[bytes], unk: int, seen: bytes, passes: Sequence[Mapping[str, int | bytes]]
    ) -> None: ...
    def apply_block(self, data: bytes, sep: bytes) -> tuple[bytes, list[int]] | None: ...
