"""safs.torch: SAFS as a torch.distributed backend (docs/python.md, "A torch
backend").

Importing this module registers the backend ``"safs"`` with c10d, so that
pipeline code moves its tensors over SAFS endpoints (``safs.runtime``) by
choosing the backend; the semantics come from ``hint``::

    import torch.distributed as dist
    import safs.torch

    dist.init_process_group("safs", init_method="tcp://198.18.0.1:29500",
                            rank=rank, world_size=2)
    safs.torch.hint(tag=3, slack_ns=20_000_000)   # the consumer needs it in 20 ms
    work = dist.isend(activations, dst=1, tag=3)
    ...
    safs.torch.update(work, slack_ns=5_000_000)   # the plan moved: sooner

Point-to-point only: send, recv, isend, irecv (from a named source) and a
barrier through the rendezvous store; collectives raise. Tensors are CPU,
dense and contiguous (not conjugate or negative views), sent and received
in place, and kept alive until their transfer ends, even if the caller
drops the Work and the tensor. Each process group owns one
endpoint: it listens on ``SAFS_LISTEN_HOST`` (or ``options(listen_host=)``;
default 127.0.0.1) and publishes its address through the store. Peers
authenticate with the job key (``SAFS_JOB_KEY`` / ``SAFS_JOB_KEY_FILE``, as
``safs-rt`` reads it); without one the endpoint is allowed only on loopback.
The key never travels through the store, which is not authenticated.

Matching follows torch's rule: the n-th send from a rank to a peer with a
tag lands in the n-th receive posted there for that rank and tag (the SAFS
tag carries the torch tag and that count).
"""

import atexit
import ctypes
import datetime
import math
import os
import threading
import weakref

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import ProcessGroup as _ProcessGroup
from torch._C._distributed_c10d import Work as _Work

from safs import _arguments, runtime

BACKEND_NAME = "safs"
# The SAFS tag of background messages a group takes and drops (options:
# background); torch tags stop below it.
BACKGROUND_TAG = (2**32 - 1) << 32

# What a process group's endpoint is made with; options() and the
# environment set it before init_process_group.
_options = {}
_hints = {}  # torch tag -> the hint for the next send with that tag
_hints_lock = threading.Lock()
_groups = weakref.WeakSet()


def options(*, listen_host=None, listen_port=None, downlink_bps=None, wait_timeout_s=None,
            quiet=None, background=None, background_max_bytes=None, reuse_connections=None,
            contention_fallback=None, unpaced_connections=None, one_connection=None,
            judge_by_path_rate=None, edf_when_short=None, slack_adaptive=None, urgent_first=None, uplink_bps=None):
    """Sets how the next process groups' endpoints are made (before
    init_process_group; the environment's SAFS_LISTEN_HOST and
    SAFS_DOWNLINK_BPS are read when an option is not set here):
    `listen_host` the address this rank listens on and its peers reach it
    at, `listen_port` its port (SAFS_LISTEN_PORT; default: any free one);
    `downlink_bps` what its receiver may grant in all (the link's rate);
    `wait_timeout_s` how long a Work's wait() waits at most (default: the
    group's timeout); `quiet` no log lines on stderr; `background`
    (SAFS_BACKGROUND=1) the endpoint takes, and discards, messages from any
    peer that carry the SAFS tag BACKGROUND_TAG, up to
    `background_max_bytes` each (default 16 MiB): background traffic into
    the rank that its receiver schedules with the job's; `reuse_connections`
    (default True) sends each tensor on the data connection the last one
    to that peer used, instead of a new one; `contention_fallback` (default
    True) sends unpaced to a peer whose bottleneck someone else fills
    (docs/runtime.md, "Contention fallback"), on a data connection the
    kernel never paced when `unpaced_connections` (default True), one
    tensor after another on one such connection when `one_connection`
    (default True: a tensor started while an earlier one to that peer, due
    no later, is still being written waits for it and follows it);
    `judge_by_path_rate` (default True) projects such an unpaced tensor,
    for `risks()`, at what the path's last one got until it has three 20 ms
    windows of its own; `edf_when_short` (default True) lets the rank's receiver serve urgent
    transfers earliest deadline first at line rate while its granted flows
    fall short of their grants on a full downlink (docs/runtime.md,
    "Namespace testbed"); `slack_adaptive` (default False) lets it serve an
    urgent transfer with little slack left, or less than one
    bandwidth-delay product to go, at line rate in deadline order and the
    others just in time (docs/runtime.md, "Control path"); `urgent_first`
    (default False) serves every urgent transfer into the rank earliest
    deadline first at line rate, never just in time; `uplink_bps`
    (default 0: unknown) the rank's own uplink, which it then shares among
    the peers that grant it, telling a peer when it limits that peer's
    transfer (docs/runtime.md, "Uplink reports"). Each value given is
    checked here, all before any is kept (TypeError or ValueError naming
    the option): switches are True or False, ports and sizes ints, rates and
    the timeout finite numbers."""
    given = {
        "listen_host": listen_host,
        "listen_port": listen_port,
        "background": background,
        "background_max_bytes": background_max_bytes,
        "downlink_bps": downlink_bps,
        "wait_timeout_s": wait_timeout_s,
        "quiet": quiet,
        "reuse_connections": reuse_connections,
        "contention_fallback": contention_fallback,
        "unpaced_connections": unpaced_connections,
        "one_connection": one_connection,
        "judge_by_path_rate": judge_by_path_rate,
        "edf_when_short": edf_when_short,
        "slack_adaptive": slack_adaptive,
        "urgent_first": urgent_first,
        "uplink_bps": uplink_bps,
    }
    # All checked before any is kept: a refused call changes nothing, and a
    # mistake is reported here, not when a group is made or a Wait times out.
    checked = {key: _OPTION_CHECKS[key](value, f"safs.torch.options: {key}")
               for key, value in given.items() if value is not None}
    _options.update(checked)


def hint(tag, *, deadline_ns=None, slack_ns=None, urgent=True, group=0, criticality=0):
    """The semantics of the next send with torch tag `tag` from this process
    (to any peer): its no-bubble deadline on ``runtime.monotonic_ns()`` or a
    slack from the moment it is sent, whether it is urgent (feeds an op) or
    background, the dependency group of the op it feeds, and criticality.
    A send without a hint is urgent with no deadline. Every argument is
    checked here (TypeError or ValueError naming it): `tag` an int torch
    tag, `deadline_ns` and `slack_ns` ints within int64, `urgent` a bool,
    `group` and `criticality` ints within uint64 and uint32."""
    where = "safs.torch.hint"
    if deadline_ns is not None and slack_ns is not None:
        raise ValueError(f"{where}: give deadline_ns or slack_ns, not both")
    # Checked here, against what the endpoint takes: a send that took a bad
    # hint would fail after its place in the tag's order was given out.
    checked = {
        "deadline_ns": _optional_int64(deadline_ns, f"{where}: deadline_ns"),
        "slack_ns": _optional_int64(slack_ns, f"{where}: slack_ns"),
        "urgent": _arguments.boolean(urgent, f"{where}: urgent"),
        "group": _integer(group, f"{where}: group", 0, 2**64 - 1),
        "criticality": _integer(criticality, f"{where}: criticality", 0, 2**32 - 1),
    }
    tag = _torch_tag(tag, where)
    with _hints_lock:
        _hints[tag] = checked


def update(work, *, deadline_ns=None, slack_ns=None, urgent=None):
    """Moves a pending send's hint (`work` from isend on a safs group), as
    execution moves; a finished send is left as it is."""
    if not isinstance(work, SafsWork) or work.handle_kind != "send":
        raise TypeError("safs.torch.update: expected the Work of an isend on a safs process group")
    if work.is_completed():
        return
    kwargs = {}
    if deadline_ns is not None:
        kwargs["deadline_ns"] = _optional_int64(deadline_ns, "safs.torch.update: deadline_ns")
    if slack_ns is not None:
        kwargs["slack_ns"] = _optional_int64(slack_ns, "safs.torch.update: slack_ns")
    if urgent is not None:
        kwargs["urgent"] = _arguments.boolean(urgent, "safs.torch.update: urgent")
    work.endpoint.update(work.handle, **kwargs)


def announce(nbytes, dst, tag, *, start_ns=None, starts_in_ns=None, deadline_ns=None,
             slack_ns=None, criticality=0, group=None):
    """Announces the next send from this process to rank `dst` with torch tag
    `tag` before it exists (docs/runtime.md, "Transfers announced ahead"):
    `nbytes`, starting at `start_ns` (``runtime.monotonic_ns()``) or in
    `starts_in_ns`, due at `deadline_ns` or in `slack_ns`. Its receiver
    plans the rate in and grants it ahead; that send, if it starts within
    100 ms (less the control RTT) of its start and its hint names no group,
    goes at the planned grant from its first byte. If the receiver warns that
    it cannot be on time, `risks()` lists it as `planned` at once, named by
    this tag and the send's number. Raises ValueError for what cannot be
    planned."""
    pg = group if group is not None else dist.distributed_c10d._get_default_group()
    if not isinstance(pg, ProcessGroupSafs):
        raise TypeError("safs.torch.announce: not a safs process group")
    pg.announce(nbytes, dst, tag, start_ns=start_ns, starts_in_ns=starts_in_ns,
                deadline_ns=deadline_ns, slack_ns=slack_ns, criticality=criticality)


def stats(group=None):
    """The counters of a safs process group's endpoint (default: the default
    group): data and control bytes each way, grants, misses."""
    pg = group if group is not None else dist.distributed_c10d._get_default_group()
    if not isinstance(pg, ProcessGroupSafs):
        raise TypeError("safs.torch.stats: not a safs process group")
    return pg.endpoint.stats()


def risks(group=None):
    """The sends of a safs process group (default: the default group)
    projected to miss their deadlines since the last call, oldest first
    (the endpoint's `risks()`, docs/runtime.md "Risk"), each named as torch
    names it: `tag` is the torch tag and `seq` the send's number among that
    tag's sends to its peer (the first is 0); with `planned` true, an
    announced send its receiver warned of, maybe before it was sent."""
    pg = group if group is not None else dist.distributed_c10d._get_default_group()
    if not isinstance(pg, ProcessGroupSafs):
        raise TypeError("safs.torch.risks: not a safs process group")
    named = []
    for risk in pg.endpoint.risks():
        safs_tag = risk.pop("tag")
        named.append({"tag": safs_tag >> 32, "seq": safs_tag & (2**32 - 1), **risk})
    return named


def _tensor_buffer(tensor, what):
    """A writable view of a CPU tensor's bytes, without a copy (any dtype:
    numpy has no bfloat16), that keeps the tensor, and so its memory, alive
    for as long as the endpoint holds the view: until the transfer ends,
    even if the caller drops the Work and the tensor first."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"safs backend: {what} expects a torch.Tensor, got {type(tensor).__name__}")
    if tensor.device.type != "cpu":
        raise ValueError(f"safs backend: {what} needs a CPU tensor (got {tensor.device})")
    if tensor.layout != torch.strided:
        raise ValueError(
            f"safs backend: {what} needs a dense tensor, got layout {tensor.layout} "
            "(call .to_dense())"
        )
    # A conjugate or negative view's memory holds the values before the
    # conjugation or negation, which only its reads apply: its bytes are not
    # its values, either way.
    for is_lazy, view, remedy in ((tensor.is_conj(), "a conjugate view (.conj())", "resolve_conj"),
                                  (tensor.is_neg(), "a negative view", "resolve_neg")):
        if is_lazy:
            instead = (f"send tensor.{remedy}() (a copy) instead" if what == "send" else
                       "receive into a tensor that is not a view of this kind")
            raise ValueError(
                f"safs backend: {what} got {view}, whose memory does not hold its values; "
                f"{instead}"
            )
    if not tensor.is_contiguous():
        raise ValueError(f"safs backend: {what} needs a contiguous tensor (call .contiguous())")
    nbytes = tensor.numel() * tensor.element_size()
    if nbytes == 0:
        return bytearray()
    raw = (ctypes.c_char * nbytes).from_address(tensor.data_ptr())
    # from_address does not own the memory: the array holds the tensor, the
    # memoryview the array, and the endpoint the memoryview.
    raw.tensor = tensor
    return memoryview(raw).cast("B")


class SafsWork(_Work):
    """One isend or irecv: wait() blocks (the GIL released) until it ends and
    raises ``runtime.TransferError`` if it failed."""

    def __init__(self, endpoint, handle, handle_kind, tensor, peer_rank, timeout_s):
        super().__init__()
        self.endpoint = endpoint
        self.handle = handle
        self.handle_kind = handle_kind
        self._tensor = tensor  # kept alive until the transfer ends
        self._peer_rank = peer_rank
        self._timeout_s = timeout_s

    def wait(self, timeout=None):
        # c10d's "no timeout" is a zero timedelta: the group's timeout then.
        seconds = self._timeout_s
        if timeout is not None:
            if not isinstance(timeout, datetime.timedelta):
                raise TypeError(
                    f"safs backend: wait(timeout) expects a datetime.timedelta, got "
                    f"{type(timeout).__name__}"
                )
            if timeout < datetime.timedelta(0):
                raise ValueError(
                    f"safs backend: wait(timeout) expects 0 (the group's timeout) or more, "
                    f"got {timeout.total_seconds()} s"
                )
            if timeout > datetime.timedelta(0):
                seconds = timeout.total_seconds()
        self.handle.wait(timeout_s=seconds)
        return True

    def is_completed(self):
        return self.handle.done()

    def is_success(self):
        return self.handle.done() and self.handle.error is None

    def exception(self):
        return None if self.handle.error is None else runtime.TransferError(self.handle.error)

    def result(self):
        return [self._tensor]

    def source_rank(self):
        return self._peer_rank

    def _source_rank(self):
        return self._peer_rank

    def synchronize(self):
        pass


class _DoneWork(_Work):
    """A Work that is already complete (barrier)."""

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True

    def is_success(self):
        return True


class ProcessGroupSafs(_ProcessGroup):
    """The "safs" backend: one SAFS endpoint per process group."""

    def __init__(self, store, rank, size, timeout):
        super().__init__(rank, size)
        self._store = store
        self._rank = rank
        self._size = size
        self._timeout_s = timeout.total_seconds() if timeout is not None else 1800.0
        self._timeout_s = float(_options.get("wait_timeout_s", self._timeout_s))
        # An option given (checked by options()) wins over the environment,
        # even when it is 0 or False; an empty variable counts as unset.
        host = _option_or_environment("listen_host", "SAFS_LISTEN_HOST", str)
        if host is None:
            host = "127.0.0.1"
        port = _option_or_environment("listen_port", "SAFS_LISTEN_PORT", int)
        kwargs = {"listen": (host, 0 if port is None else port),
                  "quiet": _options.get("quiet", False),
                  "reuse_connections": _options.get("reuse_connections", True),
                  "contention_fallback": _options.get("contention_fallback", True),
                  "unpaced_connections": _options.get("unpaced_connections", True),
                  "one_connection": _options.get("one_connection", True),
                  "judge_by_path_rate": _options.get("judge_by_path_rate", True),
                  "edf_when_short": _options.get("edf_when_short", True),
                  "slack_adaptive": _options.get("slack_adaptive", False),
                  "urgent_first": _options.get("urgent_first", False),
                  "uplink_bps": _options.get("uplink_bps", 0.0)}
        downlink = _option_or_environment("downlink_bps", "SAFS_DOWNLINK_BPS", float)
        if downlink is not None:
            kwargs["downlink_bps"] = downlink
        # The drain's buffer is made before the endpoint: a size too large
        # for memory fails here, not later on the drain's thread.
        drain_scratch = None
        if _options.get("background", os.environ.get("SAFS_BACKGROUND") == "1"):
            drain_scratch = bytearray(_options.get("background_max_bytes", 16 << 20))
        has_key = os.environ.get("SAFS_JOB_KEY") or os.environ.get("SAFS_JOB_KEY_FILE")
        if not has_key:
            if not host.startswith("127."):
                raise ValueError(
                    f"safs backend: listening on {host} needs the job key (SAFS_JOB_KEY or "
                    "SAFS_JOB_KEY_FILE, 32 bytes shared by the job's ranks); without one "
                    "only a loopback address (SAFS_LISTEN_HOST=127.0.0.1) is allowed"
                )
            kwargs["insecure_loopback_only"] = True
        self.endpoint = runtime.Endpoint(**kwargs)
        self.endpoint.start()
        address_host, address_port = self.endpoint.address
        store.set(f"safs/address/{rank}", f"{address_host}:{address_port}")
        self._peers = {}
        self._sent = {}  # (dst, tag) -> sends so far
        self._posted = {}  # (src, tag) -> receives so far
        self._planned = {}  # (dst, tag, send number) -> the group its plan is matched by
        # Held from reading a number to counting it: the endpoint's call
        # between releases the GIL, and another thread's send or receive on
        # the same peer and tag would take the same number.
        self._numbering = threading.Lock()
        self._barriers = 0
        self.background_bytes = 0
        self._closing = threading.Event()
        self._drainer = None
        if drain_scratch is not None:
            self._drainer = threading.Thread(target=self._drain,
                                             args=(BACKGROUND_TAG, drain_scratch), daemon=True)
            self._drainer.start()
        _groups.add(self)

    # -- what c10d asks of a backend ------------------------------------

    def getBackendName(self):
        return BACKEND_NAME

    def size(self):
        return self._size

    def rank(self):
        return self._rank

    # A send or receive takes its number in the tag's order only once the
    # endpoint has taken it: one refused (a bad tag, rank, tensor or hint)
    # leaves the numbers, and so the matching of later ones, as they were.

    def send(self, tensors, dst, tag=0):
        tensor = self._one_tensor(tensors, "send")
        buffer = _tensor_buffer(tensor, "send")
        tag = _torch_tag(tag, "safs backend: send")
        dst, peer = self._peer(dst, "send")
        with self._numbering:
            seq = self._sent.get((dst, tag), 0)
            with _hints_lock:
                given = _hints.get(tag)
            kwargs = {"tag": _safs_tag(tag, seq)}
            if given is not None:  # checked by hint()
                kwargs.update({key: value for key, value in given.items() if value is not None})
            planned = self._planned.get((dst, tag, seq))
            if planned is not None and kwargs.get("group", 0) == 0:
                kwargs["group"] = planned
            handle = self.endpoint.send(buffer, peer, **kwargs)
            self._sent[(dst, tag)] = seq + 1
            self._planned.pop((dst, tag, seq), None)
        with _hints_lock:
            if _hints.get(tag) is given:  # not a newer hint given meanwhile
                _hints.pop(tag, None)
        return SafsWork(self.endpoint, handle, "send", tensor, dst, self._timeout_s)

    def announce(self, nbytes, dst, tag, *, start_ns=None, starts_in_ns=None, deadline_ns=None,
                 slack_ns=None, criticality=0):
        """safs.torch.announce on this group. The plan is matched by a group
        of its own: the SAFS tag of the send it announces, plus one (never 0)."""
        where = "safs backend: announce"
        # An int: a float size would be cut (1.9 bytes announced as 1).
        nbytes = _integer(nbytes, f"{where}: nbytes", 1, 2**64 - 1)
        tag = _torch_tag(tag, where)
        dst, peer = self._peer(dst, "announce")
        criticality = _integer(criticality, f"{where}: criticality", 0, 2**32 - 1)
        with self._numbering:
            seq = self._sent.get((dst, tag), 0)  # the number send() will give it
            safs_tag = _safs_tag(tag, seq)
            self.endpoint.announce(nbytes, peer, start_ns=start_ns, starts_in_ns=starts_in_ns,
                                   deadline_ns=deadline_ns, slack_ns=slack_ns,
                                   group=safs_tag + 1, criticality=criticality, tag=safs_tag)
            self._planned[(dst, tag, seq)] = safs_tag + 1

    def recv(self, tensors, src, tag=0):
        tensor = self._one_tensor(tensors, "recv")
        buffer = _tensor_buffer(tensor, "recv")
        tag = _torch_tag(tag, "safs backend: recv")
        src, peer = self._peer(src, "recv")
        with self._numbering:
            seq = self._posted.get((src, tag), 0)
            handle = self.endpoint.recv_into(buffer, tag=_safs_tag(tag, seq), peer=peer)
            self._posted[(src, tag)] = seq + 1
        return SafsWork(self.endpoint, handle, "recv", tensor, src, self._timeout_s)

    def recv_anysource(self, tensors, tag=0):
        raise NotImplementedError(
            "safs backend: a receive names its source (recv from any source is not supported)"
        )

    def barrier(self, opts=None):
        # Through the rendezvous store: the last rank to arrive opens it.
        # Rank 0 hosts a TCP store and often leaves right after the last
        # barrier, taking the store with it, so it returns only once every
        # rank has seen the barrier open: no rank is left waiting on a store
        # that is gone (a reset connection, seen under load).
        self._barriers += 1
        key = f"safs/barrier/{self._barriers}"
        if self._store.add(key, 1) == self._size:
            self._store.set(key + "/open", "1")
        else:
            self._store.wait([key + "/open"])
        if self._store.add(key + "/seen", 1) == self._size:
            self._store.set(key + "/all-seen", "1")
        elif self._rank == 0:
            self._store.wait([key + "/all-seen"])
        return _DoneWork()

    def close(self):
        """Closes the endpoint (pending transfers fail)."""
        self._closing.set()
        if self._drainer is not None:
            self._drainer.join()
            self._drainer = None
        if self.endpoint is not None:
            self.endpoint.close()

    # -- helpers ----------------------------------------------------------

    def _drain(self, tag, scratch):
        # Background into this rank: taken and dropped, one at a time, until
        # the endpoint closes (the posted receive then fails).
        # It waits in short turns, so that close() can stop it before the
        # endpoint goes.
        handle = None
        while not self._closing.is_set():
            try:
                if handle is None:
                    handle = self.endpoint.recv_into(scratch, tag=tag)
                handle.wait(timeout_s=0.1)
            except TimeoutError:
                continue
            except Exception:
                return
            self.background_bytes += handle.bytes
            handle = None

    def _one_tensor(self, tensors, what):
        if len(tensors) != 1:
            raise ValueError(f"safs backend: {what} takes one tensor, got {len(tensors)}")
        return tensors[0]

    def _peer(self, rank, what):
        """The rank as an int, and its endpoint's address from the store."""
        # An int only: the store is asked by the rank's text, and no rank
        # publishes "1.0" or "True", so the ask would wait out the store.
        rank = _arguments.integer(rank, f"safs backend: {what} expects an int peer rank")
        if not 0 <= rank < self._size or rank == self._rank:
            raise ValueError(
                f"safs backend: peer rank {rank} is not another rank of 0..{self._size - 1}"
            )
        peer = self._peers.get(rank)
        if peer is None:
            peer = self._store.get(f"safs/address/{rank}").decode()
            self._peers[rank] = peer
        return rank, peer


def _safs_tag(tag, seq):
    return (_torch_tag(tag, "safs backend") << 32) | (seq % 2**32)


# -- checking arguments ---------------------------------------------------
# Each raises TypeError (not the type expected) or ValueError (out of range)
# naming the argument, `name`, with where it was given.


def _integer(value, name, low, high):
    """An int (_arguments.integer) in low..high."""
    value = _arguments.integer(value, name)
    if not low <= value <= high:
        raise ValueError(f"{name}: expected an int from {low} to {high}, got {value}")
    return value


def _optional_int64(value, name):
    return None if value is None else _integer(value, name, -(2**63), 2**63 - 1)


def _torch_tag(tag, where):
    """A torch tag: 0..2^32-2 (the SAFS tag's upper half; 2^32-1 is
    background's)."""
    tag = _arguments.integer(tag, f"{where}: tag")
    if not 0 <= tag < 2**32 - 1:
        raise ValueError(f"{where}: tag {tag} is outside 0..2^32-2 (2^32-1 is background's)")
    return tag


def _real(value, name, low, high, *, low_included=True):
    """A finite int or float in low..high (`low` itself only if
    `low_included`)."""
    value = float(_arguments.real(value, name))
    above_low = value >= low if low_included else value > low
    if not (math.isfinite(value) and above_low and value <= high):
        bound = "at least" if low_included else "above"
        raise ValueError(
            f"{name}: expected a finite number {bound} {low:g} and at most {high:g}, got {value}"
        )
    return value


def _host(value, name):
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected a host name or address (a str), "
                        f"got {type(value).__name__}")
    if not value or "\0" in value:
        raise ValueError(f"{name}: expected a host name or address, got {value!r}")
    return value


# The endpoint takes link rates above 0 (downlink) or from 0 (uplink, 0
# for unknown) up to 1 Pbit/s.
_MAX_BPS = 1e15

_OPTION_CHECKS = {
    "listen_host": _host,
    "listen_port": lambda value, name: _integer(value, name, 0, 65535),
    "downlink_bps": lambda value, name: _real(value, name, 0, _MAX_BPS, low_included=False),
    "uplink_bps": lambda value, name: _real(value, name, 0, _MAX_BPS),
    # Above 0: a group whose every wait is a poll or fails at once is no use.
    "wait_timeout_s": lambda value, name: _real(value, name, 0, 1e9, low_included=False),
    "background_max_bytes": lambda value, name: _integer(value, name, 1, 2**63 - 1),
    **{switch: _arguments.boolean for switch in (
        "quiet", "background", "reuse_connections", "contention_fallback", "unpaced_connections",
        "one_connection", "judge_by_path_rate", "edf_when_short", "slack_adaptive",
        "urgent_first")},
}


def _option_or_environment(key, variable, parse):
    """options()'s value for `key` if given, else the environment's
    `variable` (unset or empty: None), checked as options() checks it."""
    if key in _options:
        return _options[key]
    text = os.environ.get(variable)
    if not text:
        return None
    try:
        value = parse(text)
    except ValueError:
        raise ValueError(f"{variable}: expected {key} ({parse.__name__}), got {text!r}") from None
    return _OPTION_CHECKS[key](value, variable)


def _create(store, rank, size, timeout):
    return ProcessGroupSafs(store, rank, size, timeout)


def _close_all():
    for group in list(_groups):
        try:
            group.close()
        except Exception:  # closing at exit: nothing left to report to
            pass


if BACKEND_NAME.upper() not in dist.Backend._plugins:
    dist.Backend.register_backend(BACKEND_NAME, _create)
atexit.register(_close_all)

__all__ = ["BACKEND_NAME", "BACKGROUND_TAG", "ProcessGroupSafs", "SafsWork", "announce", "hint",
           "options", "risks", "stats", "update"]
