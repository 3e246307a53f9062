"""Pipeline schedules: the order of ops on each stage.

An op is (kind, microbatch): "F" forward, "B" input gradient, "W" weight
gradient, or "BW" the two fused (GPipe and 1F1B run B and W fused; ZB-H1
splits them, ZeroBubble, arXiv 2401.10241). Pure Python, no torch.
"""

SCHEDULES = ("gpipe", "1f1b", "zb-h1")


def stage_ops(schedule, stages, microbatches, stage):
    """The ops of `stage` (0 = first) in the order it runs them."""
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule {schedule!r}: expected one of {', '.join(SCHEDULES)}")
    if not 0 <= stage < stages:
        raise ValueError(f"stage {stage}: expected 0..{stages - 1}")
    m = microbatches
    if schedule == "gpipe":
        return [("F", i) for i in range(m)] + [("BW", i) for i in range(m)]
    warmup = min(stages - stage - 1, m)
    if schedule == "1f1b":
        ops = [("F", i) for i in range(warmup)]
        for i in range(m - warmup):
            ops += [("F", warmup + i), ("BW", i)]
        return ops + [("BW", i) for i in range(m - warmup, m)]
    # ZB-H1: 1F1B's order with each B split from its W, and the W of
    # micro-batch i postponed until after the B of micro-batch i + warmup,
    # so a stage fills what would be its cool-down bubble with weight
    # gradients; memory stays 1F1B's (at most `warmup` W's pending).
    order = [("F", i) for i in range(warmup)]
    for i in range(m - warmup):
        order += [("F", warmup + i), ("B", i)]
    order += [("B", i) for i in range(m - warmup, m)]
    ops, pending_w = [], []
    for op in order:
        ops.append(op)
        if op[0] == "B":
            pending_w.append(("W", op[1]))
            if len(pending_w) > warmup:
                ops.append(pending_w.pop(0))
    return ops + pending_w


def consumer_of(kind, stages, stage, schedule):
    """Where the tensor an op produces goes: (stage, kind) of the op that
    needs it, or None (the first stage's backward sends nothing, the last
    stage's forward feeds its own backward)."""
    if kind == "F":
        return (stage + 1, "F") if stage + 1 < stages else None
    if kind in ("B", "BW"):
        return (stage - 1, "B" if schedule == "zb-h1" else "BW") if stage > 0 else None
    return None


def plan(schedule, stages, microbatches, duration_s, transfer_s):
    """When each op starts if ops take `duration_s[kind]` and each transfer
    `transfer_s` (a list scheduling of the stages' orders): {(stage, kind,
    microbatch): start in seconds from the iteration's start}. This is the
    no-bubble timestamp of the transfer an op waits for."""
    orders = [stage_ops(schedule, stages, microbatches, s) for s in range(stages)]
    end, start = {}, {}
    place = [0] * stages
    free_at = [0.0] * stages
    while any(place[s] < len(orders[s]) for s in range(stages)):
        progressed = False
        for s in range(stages):
            while place[s] < len(orders[s]):
                kind, mb = orders[s][place[s]]
                ready = free_at[s]
                if kind == "F" and s > 0:
                    producer = (s - 1, "F", mb)
                elif kind in ("B", "BW") and s + 1 < stages:
                    producer = (s + 1, kind, mb)
                else:
                    producer = None
                if producer is not None:
                    if producer not in end:
                        break
                    ready = max(ready, end[producer] + transfer_s)
                start[(s, kind, mb)] = ready
                end[(s, kind, mb)] = free_at[s] = ready + duration_s[kind]
                place[s] += 1
                progressed = True
        if not progressed:
            raise RuntimeError(f"schedule {schedule}: the stages' orders deadlock")
    return start
