#!/usr/bin/env python3
"""A test objective for cabo's external problem, misbehaving on request.

    python3 objective.py MODE

MODE is ok, slow, wall, crash, hang, hang-once, garbage, error, nan, huge, no-eval,
wrong-eval, extra-line, long-line, eager, always-error or flaky; the misbehaving modes do so at
evaluation 2 (hang-once: the first time it is asked; eager: before reading any request;
always-error: at every evaluation; flaky: at the first call of every evaluation, answering
the second). Each call appends its evaluation index to calls.txt in the working directory
(the spec's directory), so a test can count how often each evaluation was asked; each
process appends its id to pids.txt, and a hanging one the id of a child it started too.
"""
import json
import os
import subprocess
import sys
import time

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
