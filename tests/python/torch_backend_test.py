"""safs.torch: the "safs" torch.distributed backend, two ranks on loopback
(each a process of its own, as torch.distributed runs them). Tensors of any
dtype arrive byte for byte both ways; sends with one tag land in the
receives for that tag in order, however late a receive is posted; hints and
updates reach the SAFS endpoint (its receiver grants); a two-stage pipeline
step over "safs" gives the same gradients as over "gloo"; and bad use fails
with a message. Skips (77) without torch (python3-torch)."""

import datetime
import json
import os
import socket
import subprocess
import sys
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
    import time

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
        # The group makes its endpoint from options(); record what it asks for.
        from unittest import mock

        made = []

        class Recorder:
            def __init__(self, **kwargs):
                made.append(kwargs)
                raise RuntimeError("recorded")

        for value in (False, True):
            safs_torch.options(edf_when_short=value, contention_fallback=value,
                               unpaced_connections=value, one_connection=value,
                               judge_by_path_rate=value,
                               slack_adaptive=value,
                               urgent_first=value)
            try:
                with mock.patch.object(safs_torch.runtime, "Endpoint", Recorder):
                    with self.assertRaisesRegex(RuntimeError, "recorded"):
                        safs_torch.ProcessGroupSafs(dist.HashStore(), 0, 2, None)
            finally:
                safs_torch._options.pop("edf_when_short", None)
                safs_torch._options.pop("contention_fallback", None)
                safs_torch._options.pop("unpaced_connections", None)
                safs_torch._options.pop("one_connection", None)
                safs_torch._options.pop("judge_by_path_rate", None)
                safs_torch._options.pop("slack_adaptive", None)
                safs_torch._options.pop("urgent_first", None)
            self.assertIs(made[-1]["edf_when_short"], value)
            self.assertIs(made[-1]["contention_fallback"], value)
            self.assertIs(made[-1]["one_connection"], value)
            self.assertIs(made[-1]["judge_by_path_rate"], value)
            self.assertIs(made[-1]["unpaced_connections"], value)
            self.assertIs(made[-1]["slack_adaptive"], value)
            self.assertIs(made[-1]["urgent_first"], value)


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
        import time

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


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--worker":
        worker(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    else:
        unittest.main()
