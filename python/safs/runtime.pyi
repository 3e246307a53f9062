# Type stubs for safs.runtime (python/runtime_module.cc, safs/runtime.py).
from typing import Any, Optional, Tuple, Union

from typing_extensions import Buffer

Peer = Union[Tuple[str, int], str]

class TransferError(RuntimeError): ...

def monotonic_ns() -> int: ...

# What both handles have (one binding template in runtime_module.cc); not a
# class at run time.
class _Handle:
    def done(self) -> bool: ...
    def wait(self, timeout_s: Optional[float] = None) -> None: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def tag(self) -> int: ...
    @property
    def bytes(self) -> int: ...
    @property
    def peer(self) -> str: ...
    @property
    def error(self) -> Optional[str]: ...

class SendHandle(_Handle):
    @property
    def flow(self) -> int: ...
class RecvHandle(_Handle): ...

class Endpoint:
    def __init__(
        self,
        listen: Tuple[str, int] = ("127.0.0.1", 0),
        *,
        downlink_bps: float = 1e9,
        job_key: Optional[bytes] = None,
        job_key_file: Optional[str] = None,
        insecure_loopback_only: bool = False,
        member_key_file: Optional[str] = None,
        roster_file: Optional[str] = None,
        max_unexpected_bytes: Optional[int] = None,
        max_unexpected_messages: Optional[int] = None,
        reuse_connections: bool = True,
        contention_fallback: bool = True,
        unpaced_connections: bool = True,
        one_connection: bool = True,
        judge_by_path_rate: bool = True,
        edf_when_short: bool = True,
        slack_adaptive: bool = False,
        urgent_first: bool = False,
        uplink_bps: float = 0.0,
        quiet: bool = False,
    ) -> None: ...
    def __enter__(self) -> "Endpoint": ...
    def __exit__(self, *exc: Any) -> bool: ...
    @property
    def address(self) -> Tuple[str, int]: ...
    @property
    def running(self) -> bool: ...
    @property
    def pending(self) -> int: ...
    @property
    def loop_calls(self) -> int: ...
    def fileno(self) -> int: ...
    def completion_fd(self) -> int: ...
    def drain(self) -> int: ...
    def start(self) -> None: ...
    def stop(self) -> None: ...
    def close(self) -> None: ...
    def progress(self, max_wait_s: float = 0.0) -> None: ...
    def stats(self) -> dict[str, int]: ...
    def risks(self) -> list[dict[str, Union[int, float]]]: ...
    def send(
        self,
        buffer: Buffer,
        peer: Peer,
        *,
        deadline_ns: Optional[int] = None,
        slack_ns: Optional[int] = None,
        tag: int = 0,
        group: int = 0,
        urgent: bool = True,
        criticality: int = 0,
    ) -> SendHandle: ...
    def announce(
        self,
        nbytes: int,
        peer: Peer,
        *,
        start_ns: Optional[int] = None,
        starts_in_ns: Optional[int] = None,
        deadline_ns: Optional[int] = None,
        slack_ns: Optional[int] = None,
        group: int,
        criticality: int = 0,
        tag: int = 0,
    ) -> bool: ...
    def update(
        self,
        handle: SendHandle,
        *,
        deadline_ns: Optional[int] = None,
        slack_ns: Optional[int] = None,
        urgent: Optional[bool] = None,
    ) -> bool: ...
    def recv_into(self, buffer: Buffer, tag: int, peer: Optional[Peer] = None) -> RecvHandle: ...
