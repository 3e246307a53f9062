"""safs.torch: the "safs" torch.distributed backend, two ranks on loopback
(each a process of its own, as torch.distributed runs them). Tensors of any
dtype arrive byte for byte both ways; sends with one tag land in the
receives for that tag in order, however late a receive is posted; hints and
updates reach the SAFS endpoint (its receiver grants); a two-stage pipeline
step over "safs" gives the same gradients as over "gloo"; a tensor whose
Work and last reference are dropped in flight stays alive until its
transfer ends; and bad use fails with a message, before it takes a place in
its tag's order. Skips (77) without torch (python3-torch)."""

import contextlib
import datetime
import gc
import json
import os
import socket
import subprocess
import sys
import time
import unittest

from safs_test_support import import_safs_or_skip

import_safs_or_skip()
try:
    import torch
    import torch.distributed as dist
except ImportError as e:
    print(f"skipped: torch is not installed ({e}); scripts/setup.sh installs it", file=sys.stderr)
    sys.exit(77)
try:
    import safs.torch as safs_torch
except ImportError as e:
    print(f"skipped: safs.runtime is not built ({e})", file=sys.stderr)
    sys.exit(77)

MS = 1_000_000
MIB = 1 << 20
BOUND = datetime.timedelta(seconds=5)  # every wait in the single-process tests


def unused_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pipeline_step(backend, rank, port):
    """One training step of a two-stage model, stage `rank`: F on stage 0,
    activations to stage 1, loss and backward there, the input gradient back.
    Returns the stage's parameter gradients, flattened."""
    torch.manual_seed(7 + rank)
    stage = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Tanh())
    torch.manual_seed(99)
    inputs = [torch.randn(16, 64) for _ in range(4)]
    for mb, x in enumerate(inputs):
        if rank == 0:
            y = stage(x)
            safs_torch.hint(mb, slack_ns=50 * MS)
            dist.send(y.detach().contiguous(), dst=1, tag=mb)
            grad = torch.empty_like(y)
            dist.recv(grad, src=1, tag=100 + mb)
            y.backward(grad)
        else:
            x_in = torch.empty(16, 64)
            dist.recv(x_in, src=0, tag=mb)
            x_in.requires_grad_(True)
            stage(x_in).pow(2).mean().backward()
            safs_torch.hint(100 + mb, slack_ns=50 * MS)
            dist.send(x_in.grad.contiguous(), dst=0, tag=100 + mb)
    return torch.cat([p.grad.flatten() for p in stage.parameters()]).tolist()


def worker(rank, port, backend):
    """The body of one rank: prints a JSON line of what it saw."""
    safs_torch.options(quiet=True)
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    seen = {"backend": dist.get_backend()}
    if backend == "safs":
        peer = 1 - rank
        # Any dtype, in place: bfloat16 has no numpy equivalent.
        big = torch.arange(1 << 18, dtype=torch.float32).to(torch.bfloat16)
        if rank == 0:
            works = []
            for i in range(5):  # one tag, in order
                safs_torch.hint(3, slack_ns=(20 + i) * MS)
                works.append(dist.isend(torch.full((1000,), float(i)), dst=peer, tag=3))
            # Announced ahead: the send with that tag starts under its plan.
            for w in works:  # done: no grant but the plan's comes now
                w.wait()
            granted = safs_torch.stats()["grants_received"]
            safs_torch.announce(big.numel() * 2, peer, 4, starts_in_ns=300 * MS, slack_ns=800 * MS)
            # Its planned grant comes a little before the start; the send
            # may start up to half a lease (100 ms) after it.
            give_up = time.monotonic() + 5
            while safs_torch.stats()["grants_received"] == granted and time.monotonic() < give_up:
                time.sleep(0.002)
            safs_torch.hint(4, slack_ns=500 * MS)
            late = dist.isend(big, dst=peer, tag=4)
            safs_torch.update(late, slack_ns=30 * MS)
            for w in works + [late]:
                w.wait()
            seen["send_done"] = all(w.is_completed() and w.is_success() for w in works + [late])
            back = torch.empty(7, dtype=torch.int64)
            dist.recv(back, src=peer, tag=9)
            seen["back"] = back.tolist()
        else:
            time.sleep(0.3)  # posted after the messages came: held, then taken
            outs = [torch.empty(1000) for _ in range(5)]
            recvs = [dist.irecv(o, src=peer, tag=3) for o in outs]
            landing = torch.empty(1 << 18, dtype=torch.bfloat16)
            dist.irecv(landing, src=peer, tag=4).wait()
            for r in recvs:
                r.wait()
            seen["order"] = [o[0].item() for o in outs]
            seen["big_equal"] = bool(torch.equal(landing, big))
            dist.send(torch.arange(7, dtype=torch.int64) * 3, dst=peer, tag=9)
        dist.barrier()
        seen["stats"] = safs_torch.stats()
    seen["grads"] = pipeline_step(backend, rank, port)
    dist.barrier()
    dist.destroy_process_group()
    print(json.dumps(seen), flush=True)


def two_groups():
    """Ranks 0 and 1 of one job in this process, on one store."""
    safs_torch.options(quiet=True)
    store = dist.HashStore()
    store.set_timeout(BOUND)
    return (safs_torch.ProcessGroupSafs(store, 0, 2, BOUND),
            safs_torch.ProcessGroupSafs(store, 1, 2, BOUND))


def dropped_buffer(check):
    """The body of a process that lets go of a tensor in flight, then
    allocates over the memory it had: a backend that does not keep it
    alive crashes, or reads or writes someone else's memory. 64 MiB
    buffers are mmap'ed on their own (glibc), so freeing one unmaps it.
    Prints a JSON line of what it saw."""
    safs_torch.options(downlink_bps=1e10)  # 64 MiB in tens of ms
    pg0, pg1 = two_groups()
    seen = {}
    if check == "send":
        received = torch.zeros(64 * MIB, dtype=torch.uint8)
        landing = pg1.recv([received], 0, 30)
        sending = torch.full((64 * MIB,), 7, dtype=torch.uint8)
        pg0.send([sending], 1, 30)  # the Work dropped too
        del sending
        gc.collect()
        allocated_over = [torch.zeros(64 * MIB, dtype=torch.uint8)]  # where `sending` was, likely
        landing.wait(BOUND)
        seen["arrived"] = bool((received == 7).all())
        allocated_over.clear()
    else:
        pg1.recv([torch.zeros(64 * MIB, dtype=torch.uint8)], 0, 31)  # tensor and Work dropped
        gc.collect()
        marker = torch.ones(64 * MIB, dtype=torch.uint8)
        before = pg1.endpoint.stats()["data_bytes_received"]
        pg0.send([torch.full((64 * MIB,), 9, dtype=torch.uint8)], 1, 31).wait(BOUND)
        give_up = time.monotonic() + 5
        while (pg1.endpoint.stats()["data_bytes_received"] < before + 64 * MIB
               and time.monotonic() < give_up):
            time.sleep(0.005)
        seen["landed"] = pg1.endpoint.stats()["data_bytes_received"] - before
        seen["marker_intact"] = bool((marker == 1).all())
    pg0.close()
    pg1.close()
    print(json.dumps(seen), flush=True)


def run_alone(*args):
    """This file run as a process of its own with `args`: its last JSON
    line. A crash (a segfault) fails the test, not the runner."""
    p = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True,
                       timeout=60, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    if p.returncode != 0:
        raise AssertionError(f"{args} exited with {p.returncode}:\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


@contextlib.contextmanager
def options_kept():
    """safs.torch's options as they were, whatever the test set."""
    saved = dict(safs_torch._options)
    try:
        yield
    finally:
        safs_torch._options.clear()
        safs_torch._options.update(saved)


def endpoint_asked_for(**env):
    """What a new group asks runtime.Endpoint for, with `env` in the
    environment; no endpoint is made."""
    from unittest import mock

    asked = []

    def record(**kwargs):
        asked.append(kwargs)
        raise RuntimeError("recorded")

    with mock.patch.dict(os.environ, env), \
            mock.patch.object(safs_torch.runtime, "Endpoint", record):
        try:
            safs_torch.ProcessGroupSafs(dist.HashStore(), 0, 2, None)
        except RuntimeError as e:
            if str(e) != "recorded":
                raise
    return asked[-1]


def run_ranks(backend):
    port = unused_port()
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--worker", str(rank), str(port), backend],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for rank in range(2)
    ]
    outputs = []
    for p in procs:
        try:
            outputs.append(p.communicate(timeout=120))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise AssertionError(f"a {backend} rank did not finish within 120 s")
    # Every rank's stderr when one fails: the first to fail is not always
    # the one that went wrong.
    if any(p.returncode != 0 for p in procs):
        report = "".join(
            f"\n--- rank {rank}, exit {p.returncode}:\n{err}"
            for rank, (p, (_, err)) in enumerate(zip(procs, outputs))
        )
        raise AssertionError(f"a {backend} rank failed:{report}")
    return [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]


class TorchBackendTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.safs = run_ranks("safs")
        cls.gloo = run_ranks("gloo")

    def test_registered_backend_is_used(self):
        self.assertEqual([r["backend"] for r in self.safs], ["safs", "safs"])

    def test_sends_with_one_tag_land_in_order_even_posted_late(self):
        self.assertEqual(self.safs[1]["order"], [0.0, 1.0, 2.0, 3.0, 4.0])

    def test_bfloat16_arrives_byte_for_byte(self):
        self.assertTrue(self.safs[1]["big_equal"])
        self.assertTrue(self.safs[0]["send_done"])

    def test_both_directions(self):
        self.assertEqual(self.safs[0]["back"], [0, 3, 6, 9, 12, 15, 18])

    def test_receiver_granted_what_it_was_told(self):
        sender, receiver = self.safs[0]["stats"], self.safs[1]["stats"]
        self.assertGreater(receiver["grants_sent"], 0)
        self.assertGreater(sender["control_bytes_sent"], 0)
        self.assertGreaterEqual(receiver["data_bytes_received"], 5 * 4000 + 2 * (1 << 18))
        self.assertEqual(sender["protocol_errors"] + receiver["protocol_errors"], 0)

    def test_an_announced_send_starts_under_its_plan(self):
        sender, receiver = self.safs[0]["stats"], self.safs[1]["stats"]
        self.assertEqual(sender["plans_sent"], 1)
        self.assertEqual(sender["flows_on_plans"], 1)
        self.assertEqual(receiver["plans_received"], 1)
        self.assertEqual(receiver["plans_unused"], 0)
        # The planned flow came and ended: judged once, warned or not.
        judged = sum(receiver[k] for k in ("plans_warned_late", "plans_warned_on_time",
                                           "plans_unwarned_late", "plans_unwarned_on_time"))
        self.assertEqual(judged, 1)

    def test_pipeline_gradients_match_gloo(self):
        for rank in range(2):
            self.assertEqual(self.safs[rank]["grads"], self.gloo[rank]["grads"])


class TorchBackendBadUseTest(unittest.TestCase):
    def group(self, **env):
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            store = dist.HashStore()
            store.set_timeout(datetime.timedelta(seconds=5))
            return safs_torch.ProcessGroupSafs(store, 0, 2, None)
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def test_non_loopback_without_key_is_refused(self):
        for name in ("SAFS_JOB_KEY", "SAFS_JOB_KEY_FILE"):
            os.environ.pop(name, None)
        with self.assertRaisesRegex(ValueError, "needs the job key"):
            self.group(SAFS_LISTEN_HOST="198.18.0.1")

    def test_bad_tensors_and_peers(self):
        safs_torch.options(quiet=True)
        pg = self.group(SAFS_LISTEN_HOST="127.0.0.1")
        try:
            with self.assertRaisesRegex(ValueError, "contiguous"):
                pg.send([torch.zeros(4, 4).t()], 1, 0)
            with self.assertRaisesRegex(ValueError, "peer rank 0"):
                pg.send([torch.zeros(4)], 0, 0)
            with self.assertRaisesRegex(ValueError, "peer rank 5"):
                pg.recv([torch.zeros(4)], 5, 0)
            with self.assertRaisesRegex(NotImplementedError, "names its source"):
                pg.recv_anysource([torch.zeros(4)], 0)
            with self.assertRaisesRegex(ValueError, "one tensor"):
                pg.send([torch.zeros(1), torch.zeros(1)], 1, 0)
            with self.assertRaisesRegex(ValueError, "tag"):
                safs_torch._safs_tag(-1, 0)
            with self.assertRaisesRegex(ValueError, "not both"):
                safs_torch.hint(1, deadline_ns=1, slack_ns=1)
            with self.assertRaisesRegex(ValueError, "peer rank 5"):
                pg.announce(1000, 5, 0, starts_in_ns=MS)
            with self.assertRaisesRegex(ValueError, "tag"):
                pg.announce(1000, 1, -1, starts_in_ns=MS)
        finally:
            pg.close()


class TorchOptionsTest(unittest.TestCase):
    def test_switches_reach_the_endpoint(self):
        switches = ("edf_when_short", "contention_fallback", "unpaced_connections",
                    "one_connection", "judge_by_path_rate", "slack_adaptive", "urgent_first")
        for value in (False, True):
            with options_kept():
                safs_torch.options(**{switch: value for switch in switches})
                asked = endpoint_asked_for()
            for switch in switches:
                self.assertIs(asked[switch], value, switch)


class TorchRisksTest(unittest.TestCase):
    def test_reports_name_the_torch_tag_and_the_sends_number(self):
        class Reporting:
            def risks(self):
                return [{"flow": 7, "tag": (5 << 32) | 2, "reported_at_ns": 11,
                         "projected_lateness_ns": 3, "rate_bps": 1.0, "needed_bps": 2.0}]

        group = safs_torch.ProcessGroupSafs.__new__(safs_torch.ProcessGroupSafs)
        group.endpoint = Reporting()
        self.assertEqual(safs_torch.risks(group), [
            {"tag": 5, "seq": 2, "flow": 7, "reported_at_ns": 11, "projected_lateness_ns": 3,
             "rate_bps": 1.0, "needed_bps": 2.0}])
        with self.assertRaisesRegex(TypeError, "not a safs process group"):
            safs_torch.risks(object())


class BackgroundDrainTest(unittest.TestCase):
    def test_background_is_taken_and_dropped_and_close_stops_it(self):
        from safs import runtime

        safs_torch.options(quiet=True, background=True, background_max_bytes=1 << 20)
        try:
            store = dist.HashStore()
            pg = safs_torch.ProcessGroupSafs(store, 0, 2, None)
        finally:
            safs_torch._options.pop("background", None)
            safs_torch._options.pop("background_max_bytes", None)
        with runtime.Endpoint(insecure_loopback_only=True, quiet=True) as sender:
            sender.start()
            for _ in range(3):
                sender.send(bytes(1 << 19), pg.endpoint.address, urgent=False,
                            tag=safs_torch.BACKGROUND_TAG).wait(timeout_s=20)
            deadline = time.monotonic() + 20
            while pg.background_bytes < 3 << 19 and time.monotonic() < deadline:
                time.sleep(0.01)
            self.assertEqual(pg.background_bytes, 3 << 19)
            self.assertEqual(pg.endpoint.stats()["unexpected_messages"], 0)
        started = time.monotonic()
        pg.close()
        self.assertLess(time.monotonic() - started, 5)


class TwoGroupsTest(unittest.TestCase):
    """Ranks 0 and 1 in this process (two_groups()), no hints left behind."""

    def setUp(self):
        self.pg0, self.pg1 = two_groups()
        self.addCleanup(self.pg1.close)
        self.addCleanup(self.pg0.close)
        self.addCleanup(safs_torch._hints.clear)

    def exchange(self, tag, sent):
        """`sent` from rank 0 to rank 1 with `tag`: what landed."""
        received = torch.zeros_like(sent)
        landing = self.pg1.recv([received], 0, tag)
        self.pg0.send([sent], 1, tag).wait(BOUND)
        landing.wait(BOUND)
        return received

    def assert_tag_still_matches(self, tag):
        """The next send and receive with `tag` find each other (a number
        taken by a refused call would leave them a place apart)."""
        self.assertEqual(self.exchange(tag, torch.arange(3.0)).tolist(), [0.0, 1.0, 2.0])


class ThreadsTest(TwoGroupsTest):
    def test_sends_and_receives_from_several_threads_each_take_their_own_number(self):
        # Numbers were read before the endpoint's call, which releases the
        # GIL, and counted after: threads took the same one, and receives
        # waited for sends that had gone under another's number.
        import threading

        threads_count, per_thread = 4, 25
        received = [torch.zeros(1) for _ in range(threads_count * per_thread)]
        landings = []

        def post(chunk):
            landings.extend(self.pg1.recv([t], 0, 5) for t in chunk)

        def send(first):
            for k in range(per_thread):
                self.pg0.send([torch.tensor([float(first + k)])], 1, 5).wait(BOUND)

        workers = [threading.Thread(target=post, args=(received[i::threads_count],))
                   for i in range(threads_count)]
        workers += [threading.Thread(target=send, args=(i * per_thread,))
                    for i in range(threads_count)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        for landing in landings:
            landing.wait(BOUND)
        self.assertEqual(sorted(t.item() for t in received),
                         [float(k) for k in range(threads_count * per_thread)])


class TensorLifetimeTest(unittest.TestCase):
    def test_a_sent_tensor_deleted_in_flight_still_arrives(self):
        self.assertTrue(run_alone("--dropped-buffer", "send")["arrived"])

    def test_a_dropped_receive_lands_in_its_own_tensor_not_in_freed_memory(self):
        seen = run_alone("--dropped-buffer", "recv")
        self.assertEqual(seen["landed"], 64 * MIB)
        self.assertTrue(seen["marker_intact"])


class TensorKindsTest(TwoGroupsTest):
    def test_dtypes_numpy_lacks_and_odd_shapes_arrive_byte_for_byte(self):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # complex32 is "experimental"
            tensors = [torch.arange(5.0).to(torch.bfloat16),
                       torch.tensor([1 + 2j, -3j]).to(torch.complex32),
                       torch.tensor([True, False, True]),
                       torch.tensor(2.5),  # 0-dim
                       torch.empty(0, 3)]  # no bytes
            for tag, sent in enumerate(tensors):
                received = self.exchange(tag, sent)
                self.assertEqual(received.shape, sent.shape)
                self.assertTrue(torch.equal(received.reshape(-1).view(torch.uint8),
                                            sent.reshape(-1).view(torch.uint8)), sent.dtype)

    def test_conjugate_and_negative_views_are_refused_both_ways(self):
        x = torch.tensor([1 + 2j, 3 + 4j], dtype=torch.complex64)
        with self.assertRaisesRegex(ValueError, r"conjugate view.*resolve_conj\(\)"):
            self.pg0.send([x.conj()], 1, 2)
        with self.assertRaisesRegex(ValueError, r"negative view.*resolve_neg\(\)"):
            self.pg0.send([torch._neg_view(torch.ones(2))], 1, 2)
        with self.assertRaisesRegex(ValueError, "conjugate view"):
            self.pg1.recv([torch.zeros(2, dtype=torch.complex64).conj()], 0, 2)
        with self.assertRaisesRegex(ValueError, "negative view"):
            self.pg1.recv([torch._neg_view(torch.zeros(2))], 0, 2)
        self.assert_tag_still_matches(2)
        # The remedy named: its values, resolved.
        received = self.exchange(3, x.conj().resolve_conj())
        self.assertEqual(received.tolist(), [1 - 2j, 3 - 4j])

    def test_a_sparse_tensor_gets_the_backends_message(self):
        with self.assertRaisesRegex(ValueError, "safs backend: send needs a dense tensor"):
            self.pg0.send([torch.zeros(3).to_sparse()], 1, 0)
        with self.assertRaisesRegex(ValueError, "safs backend: recv needs a dense tensor"):
            self.pg1.recv([torch.zeros(3).to_sparse()], 0, 0)


class RefusedCallsTest(TwoGroupsTest):
    def test_hint_refuses_values_the_endpoint_would_not_take(self):
        refused = [({"slack_ns": float("nan")}, TypeError, "slack_ns"),
                   ({"slack_ns": float("inf")}, TypeError, "slack_ns"),
                   ({"slack_ns": 2e7}, TypeError, "slack_ns"),
                   ({"deadline_ns": 2**63}, ValueError, "deadline_ns"),
                   ({"group": -1}, ValueError, "group"),
                   ({"group": 2**64}, ValueError, "group"),
                   ({"criticality": 2**40}, ValueError, "criticality"),
                   ({"criticality": 1.5}, TypeError, "criticality"),
                   ({"urgent": "no"}, TypeError, "urgent")]
        for kwargs, error, named in refused:
            with self.assertRaisesRegex(error, f"safs.torch.hint: {named}"):
                safs_torch.hint(7, **kwargs)
        self.assertEqual(safs_torch._hints, {})
        self.assert_tag_still_matches(7)

    def test_hint_refuses_tags_send_would_refuse(self):
        for tag in (-1, 2**32 - 1, 2**40):
            with self.assertRaisesRegex(ValueError, f"tag {tag} is outside"):
                safs_torch.hint(tag)
        for tag in ("3", 1.7, True):
            with self.assertRaisesRegex(TypeError, "tag: expected an int"):
                safs_torch.hint(tag)
        self.assertEqual(safs_torch._hints, {})  # not tag 1's hint, from 1.7

    def test_a_float_tag_is_refused_and_takes_no_number(self):
        with self.assertRaisesRegex(TypeError, "send: tag: expected an int, got float"):
            self.pg0.send([torch.ones(3)], 1, 1.5)
        with self.assertRaisesRegex(TypeError, "recv: tag: expected an int, got float"):
            self.pg1.recv([torch.ones(3)], 0, 1.0)
        with self.assertRaisesRegex(TypeError, "tag: expected an int, got bool"):
            self.pg0.send([torch.ones(3)], 1, True)
        self.assert_tag_still_matches(1)

    def test_a_rank_that_is_not_an_int_is_refused_at_once(self):
        started = time.monotonic()
        for rank in (1.0, True, "1"):
            with self.assertRaisesRegex(TypeError, "expects an int peer rank"):
                self.pg0.send([torch.ones(3)], rank, 4)
            with self.assertRaisesRegex(TypeError, "expects an int peer rank"):
                self.pg0.announce(12, rank, 4, starts_in_ns=MS)
        with self.assertRaisesRegex(TypeError, "expects an int peer rank"):
            self.pg1.recv([torch.ones(3)], 0.0, 4)
        # Not after the store's timeout (BOUND), asked for "safs/address/1.0".
        self.assertLess(time.monotonic() - started, 1)
        self.assert_tag_still_matches(4)

    def test_a_send_the_endpoint_refuses_takes_no_number_and_keeps_its_hint(self):
        real = self.pg0.endpoint

        class Refusing:
            def send(self, *args, **kwargs):
                raise ValueError("refused")

        safs_torch.hint(5, slack_ns=50 * MS)
        self.pg0.endpoint = Refusing()
        try:
            with self.assertRaisesRegex(ValueError, "refused"):
                self.pg0.send([torch.ones(3)], 1, 5)
        finally:
            self.pg0.endpoint = real
        self.assertIn(5, safs_torch._hints)
        self.assert_tag_still_matches(5)
        self.assertNotIn(5, safs_torch._hints)  # taken by the send that went

    def test_announce_refuses_a_size_that_is_not_a_positive_int(self):
        for nbytes, error in ((1.9, TypeError), (True, TypeError), (0, ValueError),
                              (-1, ValueError)):
            with self.assertRaisesRegex(error, "nbytes"):
                safs_torch.announce(nbytes, 1, 6, starts_in_ns=MS, group=self.pg0)
        with self.assertRaisesRegex(TypeError, "criticality"):
            safs_torch.announce(100, 1, 6, starts_in_ns=MS, criticality=0.5, group=self.pg0)

    def test_wait_refuses_a_negative_timeout(self):
        work = self.pg0.send([torch.ones(3)], 1, 8)
        with self.assertRaisesRegex(ValueError, "wait\\(timeout\\) expects 0"):
            work.wait(datetime.timedelta(seconds=-1))
        with self.assertRaisesRegex(TypeError, "timedelta"):
            work.wait(5)
        received = torch.zeros(3)
        self.pg1.recv([received], 0, 8).wait(datetime.timedelta(0))  # 0: the group's timeout
        self.assertTrue(work.wait(BOUND))
        self.assertEqual(received.tolist(), [1.0, 1.0, 1.0])


class OptionsCheckedTest(unittest.TestCase):
    def test_bad_values_are_refused_naming_the_option_and_nothing_is_kept(self):
        refused = [({"downlink_bps": 0}, ValueError), ({"downlink_bps": float("inf")}, ValueError),
                   ({"downlink_bps": "x"}, TypeError), ({"uplink_bps": -1}, ValueError),
                   ({"listen_host": ""}, ValueError), ({"listen_host": 1}, TypeError),
                   ({"listen_port": "abc"}, TypeError), ({"listen_port": 65536}, ValueError),
                   ({"listen_port": 80.0}, TypeError), ({"wait_timeout_s": -1}, ValueError),
                   ({"wait_timeout_s": 0}, ValueError),
                   ({"wait_timeout_s": float("nan")}, ValueError),
                   ({"background_max_bytes": -1}, ValueError),
                   ({"background_max_bytes": 1.5}, TypeError), ({"quiet": 1}, TypeError),
                   ({"background": "yes"}, TypeError), ({"urgent_first": 0}, TypeError)]
        with options_kept():
            before = dict(safs_torch._options)
            for kwargs, error in refused:
                (name,) = kwargs
                with self.assertRaisesRegex(error, f"safs.torch.options: {name}: expected"):
                    safs_torch.options(slack_adaptive=True, **kwargs)  # fine, yet not kept
                self.assertEqual(safs_torch._options, before)

    def test_a_given_option_is_not_replaced_by_the_environment_or_a_default(self):
        with options_kept():
            safs_torch.options(listen_port=0, uplink_bps=0, downlink_bps=2.5e8)
            made_with = endpoint_asked_for(SAFS_LISTEN_PORT="1234", SAFS_DOWNLINK_BPS="1e9")
            self.assertEqual(made_with["listen"], ("127.0.0.1", 0))
            self.assertEqual(made_with["downlink_bps"], 2.5e8)
            self.assertEqual(made_with["uplink_bps"], 0)
        with options_kept():
            safs_torch._options.pop("downlink_bps", None)
            with self.assertRaisesRegex(ValueError, "SAFS_DOWNLINK_BPS"):
                endpoint_asked_for(SAFS_DOWNLINK_BPS="x")
            with self.assertRaisesRegex(ValueError, "SAFS_DOWNLINK_BPS"):
                endpoint_asked_for(SAFS_DOWNLINK_BPS="0")
            with self.assertRaisesRegex(ValueError, "SAFS_LISTEN_PORT"):
                endpoint_asked_for(SAFS_LISTEN_PORT="abc")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--worker":
        worker(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    elif len(sys.argv) == 3 and sys.argv[1] == "--dropped-buffer":
        dropped_buffer(sys.argv[2])
    else:
        unittest.main()
