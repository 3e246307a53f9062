"""safs.runtime: SAFS on real hosts, from Python (docs/python.md, "The runtime
from Python"; the C++ API and its design: docs/runtime.md).

An Endpoint sends buffers to peers and receives into posted buffers by tag,
over kernel TCP with rates granted by each receiver. Buffers are any
contiguous object with the buffer protocol (bytes, bytearray, memoryview,
numpy arrays; a CPU torch tensor through ``tensor.numpy()``), used in place
and held until the transfer ends.

    from safs import runtime
    with runtime.Endpoint(insecure_loopback_only=True) as a, \\
         runtime.Endpoint(insecure_loopback_only=True) as b:
        a.start(); b.start()
        out = bytearray(5)
        r = b.recv_into(out, tag=1)
        a.send(b"hello", b.address, slack_ns=10_000_000, tag=1).wait(5)
        r.wait(5)

Deadlines (``deadline_ns``) are on ``monotonic_ns()``, the clock of
``time.monotonic_ns()``; ``slack_ns`` is a deadline that far from now.
"""

from safs._runtime import (
    Endpoint as _Endpoint,
    RecvHandle,
    SendHandle,
    TransferError,
    monotonic_ns,
)


class Endpoint(_Endpoint):
    """A SAFS endpoint. ``with Endpoint(...) as e:`` closes it at the end."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def drain(self):
        """Resets fileno() (after a selector said it is readable): the number
        of completions since the last drain, 0 if none."""
        import os

        try:
            return int.from_bytes(os.read(self.fileno(), 8), "little")
        except BlockingIOError:
            return 0


__all__ = ["Endpoint", "RecvHandle", "SendHandle", "TransferError", "monotonic_ns"]
