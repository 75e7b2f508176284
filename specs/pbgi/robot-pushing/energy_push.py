#!/usr/bin/env python3
"""Energy-aware robot pushing (seed 001 §5.1, after Wang & Jegelka 2017), d = 3.

One hand (a 0.6 × 2 rectangle) starts at z = (rx, ry) in [-5, 5]^2, turned to face the
origin, and is driven toward the object, a disc of radius 1 resting at the origin, at speed
5 for int(10 t) steps, t in [1, 30] (the request's x is (rx, ry, t) in these native units);
then everything coasts for 100 steps. No noise: the push is deterministic.

y = value = -|w_target - w_push|, to be maximised, where w_push is the object's final
position; the cost is |w_push| + 0.1, the distance the object was pushed plus a constant
that keeps the cost of a push that misses positive (the energy spent; the authors' code
reports |w_push| alone).

The target depends on the replication: replication r pushes toward TARGETS[r mod 20], 20
points drawn once as 10 U[0,1]^2 - 5 by NumPy's RandomState(TARGET_SEED). cabo sends the
replication index with every request (`"replication": r`).

    python3 energy_push.py
"""
import json
import math
import sys

import numpy as np

import push_world as pw

TARGET_SEED = 1
TARGETS = [tuple(t) for t in 10.0 * np.random.RandomState(TARGET_SEED).uniform(size=(20, 2)) - 5.0]
HAND_HALF_SIZE = (0.3, 1.0)
SPEED = 5.0
COST_OFFSET = 0.1


def simulate(rx, ry, duration):
    """The object's final position after a push from (rx, ry) lasting `duration`."""
    world = pw.World()
    thing = world.add_object(pw.disc(1.0), (0.0, 0.0))
    # The hand faces the origin; the reference's arctan(ry/rx), continued to rx = 0.
    angle = math.atan(ry / rx) if rx != 0 else math.pi / 2
    hand = world.add_hand((rx, ry), angle, HAND_HALF_SIZE)
    # Toward the object from where Box2D placed the hand, in Box2D's single-precision
    # vectors as the reference computes it (so the push is the reference's to the bit).
    toward = thing.position - hand.position
    norm = math.sqrt(toward[0] * toward[0] + toward[1] * toward[1])
    # A hand at the origin has no direction to push in, and stays.
    velocity = toward / norm * SPEED if norm > 0 else (0.0, 0.0)
    pw.run(world, [(hand, velocity, 0.0, pw.steps_of(duration))])
    return pw.position(thing)


def evaluate(request):
    """The answer to one request."""
    x = request["x"]
    if len(x) != 3:
        return {"error": f"expected 3 inputs (rx, ry, t), got {len(x)}"}
    replication = request.get("replication")
    if not isinstance(replication, int) or replication < 0:
        return {"error": "the request has no replication index, which chooses the target"}
    target = TARGETS[replication % len(TARGETS)]
    pushed = simulate(*x)
    moved = pw.distance(pushed, (0.0, 0.0))
    y = -pw.distance(pushed, target)
    return {"y": y, "value": y, "cost": moved + COST_OFFSET, "metrics": {"pushed": moved}}


def main():
    for line in sys.stdin:
        if line.strip():
            request = json.loads(line)
            # Each answer echoes its request's index, which keeps cabo and the program in step.
            answer = {"eval": request["eval"], **evaluate(request)}
            print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
