"""safs.runtime: two endpoints on loopback in one process. Buffers go both
ways and arrive byte for byte (numpy arrays, skipped without numpy; bytes
and bytearrays always), a receive posted after its message takes it,
wait() times out, the completion descriptor becomes readable, and failures
surface as exceptions naming what failed."""

import gc
import selectors
import socket
import sys
import time
import unittest
import weakref

from safs_test_support import import_safs_or_skip, run_python

import_safs_or_skip()
try:
    from safs import runtime
except ImportError as e:
    print(f"skipped: safs.runtime is not built ({e})", file=sys.stderr)
    sys.exit(77)

try:
    import numpy as np
except ImportError:
    np = None

needs_numpy = unittest.skipIf(np is None, "numpy is not installed (python3-numpy)")
MS = 1_000_000


def endpoint(**kwargs):
    return runtime.Endpoint(insecure_loopback_only=True, quiet=True, **kwargs)


def unused_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Pair(unittest.TestCase):
    """Endpoints a and b, each driven on its own thread."""

    def setUp(self):
        self.a = endpoint()
        self.b = endpoint()
        self.addCleanup(self.a.close)
        self.addCleanup(self.b.close)
        self.a.start()
        self.b.start()


class Transfers(Pair):
    @needs_numpy
    def test_numpy_arrays_both_ways(self):
        rng = np.random.default_rng(1)
        to_b = rng.standard_normal((512, 1024)).astype(np.float32)  # 2 MiB
        to_a = rng.integers(0, 255, 3_000_001, dtype=np.uint8)
        at_b = np.zeros_like(to_b)
        at_a = np.zeros_like(to_a)
        rb = self.b.recv_into(at_b, tag=1, peer=self.a.address)
        ra = self.a.recv_into(at_a, tag=2)
        sa = self.a.send(to_b, self.b.address, slack_ns=200 * MS, tag=1, group=7)
        sb = self.b.send(to_a, self.a.address, tag=2, urgent=False)
        for handle in (sa, sb, rb, ra):
            handle.wait(10)
            self.assertTrue(handle.done())
        self.assertEqual(to_b.tobytes(), at_b.tobytes())
        self.assertEqual(to_a.tobytes(), at_a.tobytes())
        self.assertEqual(rb.bytes, to_b.nbytes)
        self.assertEqual(rb.peer, "%s:%d" % self.a.address)
        self.assertEqual(sa.nbytes, to_b.nbytes)
        self.assertIsNone(sa.error)

    def test_bytes_into_a_bytearray_and_a_memoryview(self):
        payload = bytes(range(256)) * 1000
        whole = bytearray(len(payload))
        part = bytearray(len(payload) + 10)
        r1 = self.b.recv_into(whole, tag=5)
        r2 = self.b.recv_into(memoryview(part)[5:-5], tag=6)
        self.a.send(payload, self.b.address, tag=5).wait(10)
        self.a.send(payload, "%s:%d" % self.b.address, tag=6).wait(10)
        r1.wait(10)
        r2.wait(10)
        self.assertEqual(bytes(whole), payload)
        self.assertEqual(bytes(part[5:-5]), payload)
        self.assertEqual(bytes(part[:5]), b"\0" * 5)

    def test_sends_to_one_peer_reuse_one_connection(self):
        payloads = [bytes([i]) * (50_000 + i) for i in range(6)]
        landing = [bytearray(len(p)) for p in payloads]
        receives = [self.b.recv_into(buf, tag=20 + i) for i, buf in enumerate(landing)]
        for i, payload in enumerate(payloads):
            self.a.send(payload, self.b.address, tag=20 + i).wait(10)
        for r in receives:
            r.wait(10)
        self.assertEqual([bytes(x) for x in landing], payloads)
        stats = self.a.stats()
        self.assertEqual(stats["data_connections_opened"], 1)
        self.assertEqual(stats["data_connections_reused"], 5)
        self.assertEqual(self.b.stats()["data_connections_kept"], 1)

    def test_without_reuse_each_send_opens_a_connection(self):
        c = endpoint(reuse_connections=False)
        self.addCleanup(c.close)
        c.start()
        for i in range(3):
            c.send(b"x" * 1000, self.b.address, tag=40 + i).wait(10)
        self.assertEqual(c.stats()["data_connections_opened"], 3)
        self.assertEqual(c.stats()["data_connections_reused"], 0)

    def test_contention_fallback_is_a_switch_and_loopback_never_trips_it(self):
        # Loopback loses nothing and queues nothing: with the fallback on
        # (the default) or off, and with its unpaced connections or
        # without, no path is ever found contended.
        c = endpoint(contention_fallback=False)
        d = endpoint(unpaced_connections=False)
        for e in (c, d):
            self.addCleanup(e.close)
            e.start()
        with self.assertRaises(TypeError):
            endpoint(unpaced_connections="sometimes")
        payload = b"y" * 2_000_000
        for sender, tag in ((self.a, 60), (c, 61), (d, 64)):
            landing = bytearray(len(payload))
            r = self.b.recv_into(landing, tag=tag)
            sender.send(payload, self.b.address, tag=tag).wait(10)
            r.wait(10)
            self.assertEqual(bytes(landing), payload)
            stats = sender.stats()
            self.assertEqual(stats["contended_paths"], 0)
            self.assertEqual(stats["idle_restart_warnings"], 0)  # only on a contended path
            self.assertEqual(stats["risk_reports"], 0)  # no deadline: never judged
            # Measured either way, per window (docs/runtime.md): none lost a packet.
            self.assertEqual(len(stats["grant_delivery_windows"]), 11)
            self.assertEqual(stats["lossy_windows"], 0)
            self.assertGreaterEqual(stats["max_queue_delay_ns"], 0)

    def receiver_with(self, **settings):
        """A started endpoint with these settings that has received one
        message from self.a (checked byte for byte)."""
        c = endpoint(**settings)
        self.addCleanup(c.close)
        c.start()
        landing = bytearray(1_000_000)
        r = c.recv_into(landing, tag=62)
        self.a.send(b"z" * len(landing), c.address, tag=62, slack_ns=5_000 * MS).wait(10)
        r.wait(10)
        self.assertEqual(bytes(landing), b"z" * len(landing))
        return c

    def test_edf_when_short_is_a_switch_and_loopback_is_never_short(self):
        c = self.receiver_with(edf_when_short=False)
        self.assertEqual(c.stats()["shortfall_episodes"], 0)

    def test_slack_adaptive_is_a_switch_of_the_receiver(self):
        # Its effect is tested in C++ (SlackAdaptive.*); here only that the
        # keyword exists, takes a bool, and leaves an endpoint that receives
        # (a binding that dropped the value would still pass).
        self.receiver_with(slack_adaptive=True)
        with self.assertRaises(TypeError):
            endpoint(slack_adaptive="yes")

    def test_urgent_first_is_a_switch_of_the_receiver(self):
        # Its effect is tested in C++ (the allocator's urgent_first); here
        # only that the keyword exists, takes a bool, and leaves an endpoint
        # that receives.
        self.receiver_with(urgent_first=True)
        with self.assertRaises(TypeError):
            endpoint(urgent_first="yes")

    def test_uplink_bps_is_a_setting_of_the_sender(self):
        # Its effect is tested in C++ (UplinkReports.*); here that the
        # keyword reaches a sender that still sends, that one flow alone is
        # never limited by its own uplink (no report), and bad values.
        c = endpoint(uplink_bps=1e9)
        self.addCleanup(c.close)
        c.start()
        landing = bytearray(1_000_000)
        r = self.b.recv_into(landing, tag=63)
        c.send(b"u" * len(landing), self.b.address, tag=63, slack_ns=5_000 * MS).wait(10)
        r.wait(10)
        self.assertEqual(bytes(landing), b"u" * len(landing))
        self.assertEqual(c.stats()["uplink_reports_sent"], 0)
        self.assertEqual(self.b.stats()["uplink_reports_received"], 0)
        for bad in (-1.0, float("inf"), float("nan")):
            with self.assertRaises(ValueError) as caught:
                endpoint(uplink_bps=bad)
            self.assertIn("uplink_bps", str(caught.exception))

    def test_a_transfer_announced_ahead_starts_under_its_planned_grant(self):
        # Its effect on rates is tested in C++ (AnnounceAhead.*); here that
        # the plan reaches the receiver, the send with its group takes the
        # planned grant, and what cannot be planned raises with its reason.
        payload = b"p" * 3_000_000
        landing = bytearray(len(payload))
        r = self.b.recv_into(landing, tag=64)
        granted = self.a.stats()["grants_received"]
        self.assertTrue(self.a.announce(len(payload), self.b.address, starts_in_ns=300 * MS,
                                        slack_ns=2_000 * MS, group=9))
        # The planned grant comes a little before the start; the send may
        # then start up to half a lease (100 ms) after it.
        give_up = time.monotonic() + 5
        while self.a.stats()["grants_received"] == granted and time.monotonic() < give_up:
            time.sleep(0.002)
        self.a.send(payload, self.b.address, tag=64, group=9, slack_ns=1_700 * MS).wait(10)
        r.wait(10)
        self.assertEqual(bytes(landing), payload)
        self.assertEqual(self.a.stats()["plans_sent"], 1)
        self.assertEqual(self.a.stats()["flows_on_plans"], 1)
        self.assertEqual(self.b.stats()["plans_received"], 1)
        with self.assertRaises(ValueError) as caught:
            self.a.announce(1000, self.b.address, starts_in_ns=MS, group=0)
        self.assertIn("group", str(caught.exception))
        with self.assertRaises(ValueError) as caught:
            self.a.announce(1000, self.b.address, group=1)
        self.assertIn("start_ns or starts_in_ns", str(caught.exception))
        with self.assertRaises(ValueError) as caught:
            self.a.announce(1000, self.b.address, starts_in_ns=-MS, group=1)
        self.assertIn("passed", str(caught.exception))
        with self.assertRaises(ValueError) as caught:
            self.a.announce(1000, self.b.address, starts_in_ns=2**62, group=1)
        self.assertIn("starts_in_ns", str(caught.exception))

    def test_waiting_on_a_receive_makes_its_flow_due_now(self):
        # 20 MB told it has 20 s: still under way when its receive is
        # waited on, which makes it due now; a poll (wait(0)) does not.
        payload = bytes(range(256)) * 80_000
        landing = bytearray(len(payload))
        r = self.b.recv_into(landing, tag=60)
        s = self.a.send(payload, self.b.address, tag=60, slack_ns=20_000 * MS)
        self.assertFalse(r.done())
        with self.assertRaises(TimeoutError):
            r.wait(0)
        self.assertEqual(self.b.stats()["consumer_waits"], 0)
        r.wait(10)
        s.wait(10)
        self.assertEqual(bytes(landing), payload)
        self.assertEqual(self.b.stats()["consumer_waits"], 1)

    @needs_numpy
    def test_a_late_post_takes_the_message_that_came_before(self):
        sent = np.arange(100_000, dtype=np.int64)
        self.a.send(sent, self.b.address, tag=9).wait(10)
        self.assertEqual(self.b.stats()["unexpected_messages"], 1)
        got = np.empty_like(sent)
        r = self.b.recv_into(got, tag=9)
        self.assertTrue(r.done())  # at once
        r.wait(0)
        self.assertTrue(np.array_equal(sent, got))
        self.assertEqual(self.b.stats()["unexpected_messages"], 0)

    @needs_numpy
    def test_the_buffer_lives_until_the_transfer_ends(self):
        landing = np.zeros(1 << 20, dtype=np.uint8)
        landed = weakref.ref(landing)
        r = self.b.recv_into(landing, tag=3)
        del landing
        gc.collect()
        self.assertIsNotNone(landed())  # pending: the handle holds it
        self.a.send(np.full(1 << 20, 7, dtype=np.uint8), self.b.address, tag=3).wait(10)
        r.wait(10)
        gc.collect()
        self.assertIsNone(landed())  # ended: let go (the handle keeps only its counts)
        self.assertEqual(r.bytes, 1 << 20)
        # A handle dropped early: the endpoint holds the buffer until it ends.
        orphan = np.zeros(10, dtype=np.uint8)
        orphaned = weakref.ref(orphan)
        self.b.recv_into(orphan, tag=30)
        del orphan
        gc.collect()
        self.assertIsNotNone(orphaned())
        self.assertEqual(self.b.pending, 1)
        self.b.close()
        self.assertIsNone(orphaned())

    def test_ended_transfers_let_go_of_their_buffers_without_being_asked(self):
        for i in range(70):  # handles dropped at once
            self.b.recv_into(bytearray(10), tag=100 + i)
        for i in range(70):
            self.a.send(bytes([i]) * 10, self.b.address, tag=100 + i).wait(10)
        self.assertEqual(self.b.pending, 70)  # nobody looked yet
        waiting = [self.b.recv_into(bytearray(10), tag=1000 + i) for i in range(58)]
        # The 128th post swept: the 70 that ended are gone, the 58 wait.
        self.assertEqual(self.b.pending, len(waiting))

    def test_polling_a_pending_handle_stays_off_the_loop_until_something_ends(self):
        r = self.b.recv_into(bytearray(1000), tag=78)
        self.assertFalse(r.done())
        calls = self.b.loop_calls
        for _ in range(100):
            self.assertFalse(r.done())
        self.assertEqual(self.b.loop_calls, calls)  # nothing ended: nothing to ask
        self.a.send(bytes(1000), self.b.address, tag=78).wait(10)
        r.wait(10)  # the end is seen
        self.assertTrue(r.done())

    def test_an_update_is_queued_and_takes_effect(self):
        # 20 MB due in 20 s, moved to due at once: its receiver then counts
        # it late (the bytes take longer than 1 ns), which it would not have.
        payload = bytes(20_000_000)
        r = self.b.recv_into(bytearray(len(payload)), tag=79)
        s = self.a.send(payload, self.b.address, tag=79, slack_ns=20_000 * MS)
        self.assertFalse(s.done())
        calls = self.a.loop_calls
        self.assertTrue(self.a.update(s, slack_ns=1))
        self.assertEqual(self.a.loop_calls, calls + 1)  # queued, not waited for
        s.wait(10)
        r.wait(10)
        self.assertEqual(self.b.stats()["deadline_misses"], 1)

    def test_update_moves_the_deadline(self):
        r = self.b.recv_into(bytearray(4 << 20), tag=4)
        s = self.a.send(bytes(4 << 20), self.b.address, slack_ns=10_000 * MS, tag=4)
        self.assertIn(self.a.update(s, slack_ns=5 * MS), (True, False))  # False: already done
        s.wait(10)
        self.assertFalse(self.a.update(s, slack_ns=5 * MS))  # ended: nothing to move
        r.wait(10)


class Risk(unittest.TestCase):
    def test_a_send_that_cannot_make_its_deadline_is_counted_at_risk(self):
        # 3 MB takes 0.3 s at the receiver's whole 80 Mbit/s: due in 100 ms
        # it is projected late as soon as it is granted; due in 10 s it is not.
        with endpoint(downlink_bps=80e6) as receiver, endpoint() as sender:
            receiver.start()
            sender.start()
            began_ns = time.monotonic_ns()  # the runtime's clock is CLOCK_MONOTONIC too
            for slack_ms, tag in ((10_000, 1), (100, 2)):
                r = receiver.recv_into(bytearray(3 << 20), tag=tag)
                s = sender.send(bytes(3 << 20), receiver.address, slack_ns=slack_ms * MS, tag=tag)
                s.wait(10)
                r.wait(10)
                self.assertEqual(sender.stats()["risk_reports"], 0 if tag == 1 else 1)
            (risk,) = sender.risks()
            self.assertEqual(risk["flow"], s.flow)
            self.assertEqual(risk["tag"], 2)
            self.assertLess(began_ns, risk["reported_at_ns"])
            self.assertLessEqual(risk["reported_at_ns"], time.monotonic_ns())
            self.assertGreater(risk["projected_lateness_ns"], 0)
            self.assertGreater(risk["needed_bps"], risk["rate_bps"])
            self.assertFalse(risk["planned"])
            self.assertEqual(sender.risks(), [])  # taken

    def test_a_plan_its_receiver_cannot_serve_in_time_is_reported_before_it_is_sent(self):
        # 3 MB announced to start in 50 ms, due 100 ms later: 0.3 s at the
        # receiver's whole 80 Mbit/s. The receiver warns of it as it comes,
        # and the sender lists it as planned, by the tag given to announce.
        with endpoint(downlink_bps=80e6) as receiver, endpoint() as sender:
            receiver.start()
            sender.start()
            self.assertTrue(sender.announce(3 << 20, receiver.address, starts_in_ns=50 * MS,
                                            slack_ns=150 * MS, group=9, tag=41))
            risks, deadline = [], time.monotonic() + 5
            while not risks and time.monotonic() < deadline:
                time.sleep(0.005)
                risks = sender.risks()
            (risk,) = risks
            self.assertTrue(risk["planned"])
            self.assertEqual((risk["flow"], risk["tag"]), (0, 41))
            self.assertEqual(sender.stats()["plan_warnings_received"], 1)
            self.assertEqual(receiver.stats()["plan_warnings_sent"], 1)


class Waiting(Pair):
    def test_wait_times_out_on_a_receive_nobody_sends(self):
        r = self.b.recv_into(bytearray(10), tag=77)
        start = time.monotonic()
        with self.assertRaises(TimeoutError) as caught:
            r.wait(0.2)
        self.assertGreaterEqual(time.monotonic() - start, 0.19)
        self.assertIn("receive with tag 77", str(caught.exception))
        self.assertFalse(r.done())

    def test_completion_fd_becomes_readable(self):
        with selectors.DefaultSelector() as selector:
            selector.register(self.b, selectors.EVENT_READ)
            self.assertEqual(selector.select(timeout=0), [])
            r = self.b.recv_into(bytearray(1000), tag=8)
            self.a.send(bytes(1000), self.b.address, tag=8)
            ready = selector.select(timeout=5)
            self.assertEqual(len(ready), 1)
            self.assertGreaterEqual(self.b.drain(), 1)
            self.assertTrue(r.done())
            self.assertEqual(selector.select(timeout=0), [])  # drained
        self.assertEqual(self.b.completion_fd(), self.b.fileno())


class Failures(unittest.TestCase):
    def test_send_to_nobody_raises_transfer_error(self):
        with endpoint() as a:
            a.start()
            s = a.send(b"x" * 100, ("127.0.0.1", unused_port()), tag=1)
            with self.assertRaises(runtime.TransferError) as caught:
                s.wait(15)
            self.assertIn("send of 100 bytes (tag 1) to 127.0.0.1:", str(caught.exception))
            self.assertIn("refused", str(caught.exception))
            self.assertIsNotNone(s.error)

    def test_a_held_message_too_large_fails_the_receive(self):
        with endpoint() as a, endpoint() as b:
            a.start()
            b.start()
            a.send(bytes(3000), b.address, tag=2).wait(10)
            small = b.recv_into(bytearray(100), tag=2)
            with self.assertRaises(runtime.TransferError) as caught:
                small.wait(1)
            self.assertIn("3000 bytes, more than the posted buffer's 100", str(caught.exception))
            b.recv_into(bytearray(3000), tag=2).wait(1)  # still held: a larger one takes it

    def test_beyond_the_unexpected_bound_the_sender_is_refused(self):
        with endpoint() as a, endpoint(max_unexpected_messages=1) as b:
            a.start()
            b.start()
            a.send(bytes(10), b.address, tag=1).wait(10)
            with self.assertRaises(runtime.TransferError) as caught:
                a.send(bytes(10), b.address, tag=2).wait(10)
            self.assertIn("more than 1 messages nobody posted", str(caught.exception))

    def test_bad_input(self):
        with endpoint() as a:
            with self.assertRaises(ValueError):
                a.send(b"x", a.address, deadline_ns=1, slack_ns=1)
            with self.assertRaises(BufferError):
                a.recv_into(b"read-only", tag=1)
            with self.assertRaises(ValueError):
                a.send(b"x", "no-port")
            with self.assertRaises(TypeError):
                a.send(b"x", 1234)
            with self.assertRaises(TypeError) as caught:
                a.send(b"x", ("127.0.0.1", 80.5))
            self.assertIn("peer: expected (host: str, port: int)", str(caught.exception))
            with endpoint() as b:
                s = b.send(b"x", a.address, tag=9)
                with self.assertRaises(ValueError) as caught:
                    a.update(s, slack_ns=1)  # b's send, not a's
                self.assertIn("another endpoint", str(caught.exception))
            if np is not None:
                with self.assertRaises(BufferError):  # not contiguous
                    a.send(np.zeros((4, 4))[:, 1], a.address)
        with self.assertRaises(TypeError) as caught:
            runtime.Endpoint(("127.0.0.1", "7000"), insecure_loopback_only=True)
        self.assertIn("listen: expected (host: str, port: int)", str(caught.exception))
        with self.assertRaises(ValueError) as caught:
            runtime.Endpoint(downlink_bps=-1, insecure_loopback_only=True)
        self.assertIn("downlink_bps", str(caught.exception))
        with self.assertRaises(ValueError) as caught:
            runtime.Endpoint(job_key=b"short")
        self.assertIn("32 bytes", str(caught.exception))

    def test_arguments_are_named_and_checked(self):
        big = bytearray(1 << 20)
        with endpoint() as a:
            for kwargs, name in (
                (dict(tag=-1), "tag"),
                (dict(tag=2**64), "tag"),
                (dict(group=-1), "group"),
                (dict(criticality=2**32), "criticality"),
                (dict(slack_ns=2**63), "slack_ns"),
            ):
                with self.assertRaises(ValueError) as caught:
                    a.send(big, a.address, **kwargs)
                self.assertIn(name, str(caught.exception))
                # Not pybind's listing of every argument, the buffer's repr too.
                self.assertLess(len(str(caught.exception)), 200)
            for kwargs, name in (
                (dict(tag=1.5), "tag"),
                (dict(tag=True), "tag"),
                (dict(slack_ns=1.5), "slack_ns"),
                (dict(urgent=None), "urgent"),
            ):
                with self.assertRaises(TypeError) as caught:
                    a.send(big, a.address, **kwargs)
                self.assertIn(name, str(caught.exception))
                self.assertLess(len(str(caught.exception)), 200)
            with self.assertRaises(ValueError) as caught:
                a.recv_into(big, tag=-1)
            self.assertIn("tag", str(caught.exception))
            with self.assertRaises(ValueError) as caught:
                a.announce(-1, a.address, starts_in_ns=MS, slack_ns=MS, group=1)
            self.assertIn("nbytes", str(caught.exception))
            with self.assertRaises(TypeError) as caught:
                a.announce(1.9, a.address, starts_in_ns=MS, slack_ns=MS, group=1)
            self.assertIn("nbytes", str(caught.exception))
            for peer in ("127.0.0.1\0junk:80", ("127.0.0.1\0junk", 80)):
                with self.assertRaises(ValueError) as caught:
                    a.send(b"x", peer)
                self.assertIn("NUL", str(caught.exception))
        with self.assertRaises(ValueError) as caught:
            endpoint(listen=("127.0.0.1\0zz", 0))
        self.assertIn("NUL", str(caught.exception))
        with self.assertRaises(ValueError) as caught:
            endpoint(max_unexpected_bytes=-1)
        self.assertIn("max_unexpected_bytes", str(caught.exception))

    def test_a_slack_past_the_clock_is_no_deadline(self):
        with endpoint() as a, endpoint(downlink_bps=1e6) as b:
            a.start()
            b.start()
            a.send(bytes(1 << 20), b.address, tag=1, slack_ns=sys.maxsize)
            time.sleep(0.3)
            # A deadline wrapped into the past would be reported at risk.
            self.assertEqual(a.risks(), [])

    def test_waits_longer_than_the_clock_are_waits_without_a_limit(self):
        with endpoint() as a, endpoint() as b:
            a.start()
            b.start()
            r = b.recv_into(bytearray(10), tag=1)
            a.send(bytes(10), b.address, tag=1)
            for timeout_s in (float("inf"), 1e300, 2**64):
                r.wait(timeout_s)  # returns when it ends, not at once with TimeoutError
        with endpoint() as c:
            c.progress(0)
            start = time.monotonic()
            r = c.recv_into(bytearray(1), tag=1)
            with self.assertRaises(TimeoutError):
                r.wait(0.05)
            self.assertLess(time.monotonic() - start, 5)

    def test_threads_sharing_an_endpoint(self):
        """Sends from several threads, some waited for, some dropped: none
        is reported failed and nothing is freed twice (checked in a child
        process, so a crash fails the test instead of ending the run)."""
        result = run_python(
            """
            import sys, threading
            from safs import runtime
            E = lambda **k: runtime.Endpoint(insecure_loopback_only=True, quiet=True, **k)
            a, b = E(), E(max_unexpected_messages=100000)
            a.start(); b.start()
            failures = []
            def sender(k):
                for i in range(400):
                    h = a.send(b"x" * 100, b.address, tag=k)
                    if i % 2:
                        try:
                            h.wait(20)
                        except Exception as e:
                            failures.append(repr(e))
                    del h
            threads = [threading.Thread(target=sender, args=(k,)) for k in range(6)]
            [t.start() for t in threads]
            [t.join() for t in threads]
            print(len(failures), failures[:3])
            a.close(); b.close()
            """
        )
        self.assertEqual(result.returncode, 0, result.stderr[-2000:])
        self.assertTrue(result.stdout.startswith("0 "), result.stdout)

    def test_a_started_endpoint_in_a_forked_child_says_so(self):
        import os

        with endpoint() as a:
            a.start()
            pending = a.recv_into(bytearray(10), tag=1)
            pending.done()  # the parent has asked: a shortcut the child must not take
            pid = os.fork()
            if pid == 0:  # the child: a clear error from each call, not a hang
                code = 0
                for call in (a.stats, pending.done, lambda: pending.wait(),
                             lambda: pending.wait(1)):
                    try:
                        call()
                        code = 3
                    except RuntimeError as e:
                        code = code or (0 if "fork" in str(e) else 4)
                    except BaseException:
                        code = 5
                a.close()
                os._exit(code)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                time.sleep(0.01)
            else:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                self.fail("the child hung")
            self.assertEqual(os.waitstatus_to_exitcode(status), 0)
            a.stats()  # the parent's endpoint is untouched

    def test_closed_endpoint(self):
        a = endpoint()
        r = a.recv_into(bytearray(10), tag=1)
        a.close()
        with self.assertRaises(runtime.TransferError) as caught:
            r.wait(0)
        self.assertIn("closed", str(caught.exception))
        with self.assertRaises(RuntimeError):
            a.send(b"x", ("127.0.0.1", 1))


class Progress(unittest.TestCase):
    """Driven by progress() and wait() from this thread, without start()."""

    def test_progress_drives_an_endpoint_not_started(self):
        with endpoint() as a, endpoint() as b:
            r = b.recv_into(bytearray(100_000), tag=1)
            s = a.send(bytes(range(100)) * 1000, b.address, tag=1)
            deadline = time.monotonic() + 10
            while not (s.done() and r.done()) and time.monotonic() < deadline:
                a.progress(0.001)
                b.progress(0.001)
            s.wait(0)
            r.wait(0)
            self.assertEqual(r.bytes, 100_000)
            b.start()
            with self.assertRaises(RuntimeError):
                b.progress(0)


if __name__ == "__main__":
    unittest.main()
