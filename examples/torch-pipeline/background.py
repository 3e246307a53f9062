"""Background traffic into every stage, on the job's transport, until killed.

  safs  SAFS background flows (urgent=False, no deadline) of `--bytes` each,
        one at a time per stage, into the stage's own endpoint (which takes
        and drops them: safs.torch's background option): its receiver
        schedules them with the job's transfers
  tcp   one TCP connection per stage into a sink on port 5001, `--bytes`
        written at a time, back to back (what background is without SAFS)

    python3 background.py safs|tcp --bytes N HOST:PORT ...
"""

import argparse
import socket
import sys
import threading
import time


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=("safs", "tcp"))
    p.add_argument("--bytes", type=int, default=4 << 20)
    p.add_argument("--listen-host", default="127.0.0.1")
    p.add_argument("peers", nargs="+", help="HOST:PORT of each stage's endpoint (safs) or sink (tcp)")
    a = p.parse_args(argv)
    if a.bytes < 1:
        p.error("--bytes: expected a positive number of bytes")
    for peer in a.peers:
        host, colon, port = peer.rpartition(":")
        if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
            p.error(f"peer {peer!r}: expected HOST:PORT")
    payload = bytearray(a.bytes)
    if a.mode == "tcp":
        def blast(peer):
            host, port = peer.rsplit(":", 1)
            while True:  # until the sink is up
                try:
                    c = socket.create_connection((host, int(port)))
                    break
                except OSError:
                    time.sleep(0.2)
            with c:
                while True:
                    c.sendall(payload)
        threads = [threading.Thread(target=blast, args=(peer,), daemon=True) for peer in a.peers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return 0
    from safs import runtime
    import safs.torch as st

    with runtime.Endpoint(listen=(a.listen_host, 0), quiet=True) as ep:
        ep.start()
        pending = {peer: None for peer in a.peers}
        while True:
            for peer, handle in pending.items():
                if handle is None or handle.done():
                    # A failed one (the stage not up yet, or gone) is sent again.
                    pending[peer] = ep.send(payload, peer, urgent=False, tag=st.BACKGROUND_TAG)
            for handle in pending.values():
                try:
                    handle.wait(timeout_s=0.05)
                except (TimeoutError, runtime.TransferError):
                    pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
