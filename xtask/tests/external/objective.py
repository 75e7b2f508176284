#!/usr/bin/env python3
"""A test objective for cabo's external problem, misbehaving on request.

    python3 objective.py MODE

MODE is ok, slow, wall, ordered, crash, hang, hang-once, garbage, error, nan, huge, no-eval,
wrong-eval, extra-line, long-line, eager, always-error or flaky; the misbehaving modes do so at
evaluation 2 (hang-once: the first time it is asked; eager: before reading any request;
always-error: at every evaluation; flaky: at the first call of every evaluation, answering
the second). In `ordered` mode several copies of the program answer in a fixed order
whatever their timing: each sleeps a time drawn from its request's seed, then waits until
the run's journal (results/<spec>/EI/rep-0.evaluations.jsonl under the spec's directory)
holds the evaluation ORDER puts before its own, so that the order answers reach cabo is
fixed. Each call appends its evaluation index to calls.txt in the working directory
(the spec's directory), so a test can count how often each evaluation was asked; each
process appends its id to pids.txt, and a hanging one the id of a child it started too.
"""
import glob
import json
import os
import random
import subprocess
import sys
import time


def order():
    """The answer order of `ordered` mode: the first five evaluations (the initial design)
    in turn, then each pair swapped: 0 1 2 3 4 6 5 8 7 10 9 …"""
    out = list(range(5))
    for first in range(5, 10_000, 2):
        out += [first + 1, first]
    return out


def wait_for_predecessor(i):
    """Waits until the journal holds the evaluation answered just before `i` (30 s at most)."""
    sequence = order()
    at = sequence.index(i)
    if at == 0:
        return
    before = sequence[at - 1]
    deadline = time.time() + 30
    while time.time() < deadline:
        for journal in glob.glob("results/*/EI/rep-0.evaluations.jsonl"):
            with open(journal) as f:
                for line in f:
                    if json.loads(line).get("eval") == before:
                        return
        time.sleep(0.005)
    print(f"eval {i}: evaluation {before} never answered", file=sys.stderr, flush=True)

mode = sys.argv[1]
with open("pids.txt", "a") as pids:
    pids.write(f"{os.getpid()}\n")
if mode == "eager":
    # Answers nobody asked for, printed before the first request is read.
    print(json.dumps({"y": 1.0}), flush=True)
    print(json.dumps({"y": 2.0}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    i = request["eval"]
    with open("calls.txt", "a") as calls:
        calls.write(f"{i}\n")
    with open("calls.txt") as calls:
        asked = sum(1 for c in calls if int(c) == i)
    x0, x1 = request["x"]
    y = -((x0 - 0.5) ** 2 + (x1 - 0.25) ** 2)
    seeds = f"seed {request['seed']}, replication {request.get('replication')}"
    print(f"eval {i} at {request['x']} ({seeds})", file=sys.stderr, flush=True)
    if mode == "slow":
        time.sleep(0.02)
    if mode == "wall":
        time.sleep(0.002 + 0.01 * x1)
    if mode == "ordered":
        time.sleep(random.Random(request["seed"]).uniform(0.0, 0.03))
        wait_for_predecessor(i)
    if i == 2 and mode == "crash":
        print("simulated crash", file=sys.stderr, flush=True)
        sys.exit(3)
    if i == 2 and (mode == "hang" or (mode == "hang-once" and asked == 1)):
        # A child in the program's process group, which must not outlive it.
        child = subprocess.Popen(["sleep", "3600"])
        with open("pids.txt", "a") as pids:
            pids.write(f"{child.pid}\n")
        print("hanging", file=sys.stderr, flush=True)
        time.sleep(3600)
    if i == 2 and mode == "long-line":
        # 17 MiB without a newline, then silence with standard output still open.
        chunk = "a" * (1 << 20)
        for _ in range(17):
            sys.stdout.write(chunk)
        sys.stdout.flush()
        time.sleep(3600)
    if i == 2 and mode == "garbage":
        print("epoch 1 loss 0.3", flush=True)
        continue
    if i == 2 and mode == "error":
        print(json.dumps({"eval": i, "error": "training diverged"}), flush=True)
        continue
    if mode == "always-error":
        print(json.dumps({"eval": i, "error": "always"}), flush=True)
        continue
    if mode == "flaky" and asked % 2 == 1:
        sys.exit(1)
    if i == 2 and mode == "nan":
        y = float("nan")  # json.dumps writes NaN, which JSON does not have
    if i == 2 and mode == "huge":
        y = 1e200  # finite, but its square is not: no model can standardise it
    answer = {"eval": i, "y": y, "value": y, "cost": 1 + x1, "metrics": {"x_sum": x0 + x1}}
    if i == 2 and mode == "no-eval":
        del answer["eval"]
    if i == 2 and mode == "wrong-eval":
        answer["eval"] = i - 1
    print(json.dumps(answer), flush=True)
    if i == 2 and mode == "extra-line":
        # One answer too many: taken for the next request's, it would shift every result.
        print(json.dumps(answer), flush=True)
