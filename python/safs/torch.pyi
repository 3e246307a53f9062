# Type stubs for safs.torch (safs/torch.py): the "safs" torch.distributed backend.
from datetime import timedelta
from typing import Any, Dict, List, Optional, Union

import torch
from torch._C._distributed_c10d import ProcessGroup, Store, Work

from safs.runtime import Endpoint, RecvHandle, SendHandle

BACKEND_NAME: str
BACKGROUND_TAG: int

def options(
    *,
    listen_host: Optional[str] = None,
    listen_port: Optional[int] = None,
    downlink_bps: Optional[float] = None,
    wait_timeout_s: Optional[float] = None,
    quiet: Optional[bool] = None,
    background: Optional[bool] = None,
    background_max_bytes: Optional[int] = None,
    reuse_connections: Optional[bool] = None,
    contention_fallback: Optional[bool] = None,
    unpaced_connections: Optional[bool] = None,
    one_connection: Optional[bool] = None,
    judge_by_path_rate: Optional[bool] = None,
    edf_when_short: Optional[bool] = None,
    slack_adaptive: Optional[bool] = None,
    urgent_first: Optional[bool] = None,
    uplink_bps: Optional[float] = None,
) -> None: ...
def hint(
    tag: int,
    *,
    deadline_ns: Optional[int] = None,
    slack_ns: Optional[int] = None,
    urgent: bool = True,
    group: int = 0,
    criticality: int = 0,
) -> None: ...
def update(
    work: "SafsWork",
    *,
    deadline_ns: Optional[int] = None,
    slack_ns: Optional[int] = None,
    urgent: Optional[bool] = None,
) -> None: ...
def announce(
    nbytes: int,
    dst: int,
    tag: int,
    *,
    start_ns: Optional[int] = None,
    starts_in_ns: Optional[int] = None,
    deadline_ns: Optional[int] = None,
    slack_ns: Optional[int] = None,
    criticality: int = 0,
    group: Optional[ProcessGroup] = None,
) -> None: ...
def stats(group: Optional[ProcessGroup] = None) -> Dict[str, int]: ...
def risks(group: Optional[ProcessGroup] = None) -> List[Dict[str, Union[int, float]]]: ...

class SafsWork(Work):
    endpoint: Endpoint
    handle: Any  # SendHandle | RecvHandle
    handle_kind: str
    def wait(self, timeout: Optional[timedelta] = None) -> bool: ...
    def is_completed(self) -> bool: ...
    def is_success(self) -> bool: ...
    def result(self) -> List[torch.Tensor]: ...

class ProcessGroupSafs(ProcessGroup):
    endpoint: Endpoint
    background_bytes: int
    def __init__(self, store: Store, rank: int, size: int, timeout: Optional[timedelta]) -> None: ...
    def close(self) -> None: ...
