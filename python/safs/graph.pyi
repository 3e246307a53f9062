# Type stubs for safs.graph (a compute graph built in Python: the [graph] section).
from typing import Any, NamedTuple, Optional, Union

class Op(NamedTuple):
    index: int
    gpu: int
    duration_us: float
    label: str

class Graph:
    def __init__(self) -> None: ...
    def op(self, gpu: int, duration_us: float, label: Optional[str] = ...) -> Op: ...
    def transfer(
        self,
        producer: Union[Op, int, None],
        consumer: Union[Op, int],
        size_bytes: int,
        *,
        src: Optional[int] = ...,
    ) -> int: ...
    @property
    def ops(self) -> list[Op]: ...
    @property
    def transfers(self) -> list[dict[str, int]]: ...
    def to_dict(self) -> dict[str, list[dict[str, Any]]]: ...
