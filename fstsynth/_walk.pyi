"""Types of the optional compiled walker (fstsynth/_walk.c; see its docstring)."""

from typing import Mapping, Sequence

from typing_extensions import Buffer

class Walker:
    def __init__(
        self, tokens: Sequence[bytes], unk: int, seen: bytes, passes: Sequence[Mapping[str, int | bytes]],
        full_steps_max: int = ...,
    ) -> None: ...
    def apply_block(self, data: Buffer, sep: Buffer) -> tuple[bytes, list[int]] | None: ...
    def walk_words(self, ids: Buffer, bounds: Buffer) -> tuple[bytes, bytes]: ...
