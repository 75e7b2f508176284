#!/usr/bin/env python3
"""A test objective for cabo's external problem, misbehaving on request.

    python3 objective.py MODE

MODE is ok, slow, wall, crash, hang, garbage, error or flaky; the misbehaving modes do so
at evaluation 2 (flaky: at the first call of every evaluation, answering the second). Each
call appends its evaluation index to calls.txt in the working directory (the spec's
directory), so a test can count how often each evaluation was asked.
"""
import json
import sys
import time

mode = sys.argv[1]
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
    if i == 2 and mode == "hang":
        time.sleep(3600)
    if i == 2 and mode == "garbage":
        print("epoch 1 loss 0.3", flush=True)
        continue
    if i == 2 and mode == "error":
        print(json.dumps({"error": "training diverged"}), flush=True)
        continue
    if mode == "flaky" and asked % 2 == 1:
        sys.exit(1)
    print(json.dumps({"y": y, "value": y, "cost": 1 + x1, "metrics": {"x_sum": x0 + x1}}), flush=True)
