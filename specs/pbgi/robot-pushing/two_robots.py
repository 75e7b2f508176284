#!/usr/bin/env python3
"""Two robots push two objects (seed 000 App. C, after Wang & Jegelka 2017), d = 14.

The request's x is in native units (the spec's bounds), in the order of the authors' code:

    0, 1   hand 1's start (rx, ry) in [-5, 5]^2
    2, 3   hand 1's commanded velocity (vx, vy) in [0, 5]^2
    4      hand 1's duration t in [1, 30] time units: driven for int(10 t) steps
    5      hand 1's initial angle in [0, 2 pi]
    6..11  the same for hand 2
    12, 13 each hand's commanded angular velocity (it spins while driven) in [0, 2 pi]

Hands are 2 × 0.6 rectangles; object 1 is a unit square at (0, 2), object 2 a disc of
radius 1 at (0, -2). Each commanded velocity carries N(0, 0.01²) noise per coordinate,
drawn from NumPy's RandomState(0) for every evaluation (hand 1's x, y, then hand 2's),
so an answer is a deterministic function of x. After the longer push everything coasts
for 100 steps.

y = value = -(|object 1 - (-4.4185, -4.3709)| + |object 2 - (-3.7641, -4.4742)|), to be
maximised. The reported cost (`--cost hands`, the unknown-cost variant) is the distance
from each hand's start to its final position, summed, plus 0.1 (as the authors' code
measures "distance traversed"); `--cost none` reports none. The metrics are the hands'
distance, the longer duration max(t1, t2) (the known cost of the known-cost variant) and
each object's distance to its target.

    python3 two_robots.py [--cost hands|none]
"""
import argparse
import json
import sys

import numpy as np

import push_world as pw

TARGETS = ((-4.4185, -4.3709), (-3.7641, -4.4742))
OBJECT_STARTS = ((0.0, 2.0), (0.0, -2.0))
HAND_HALF_SIZE = (1.0, 0.3)
NOISE_STD = 0.01
NOISE_SEED = 0
COST_OFFSET = 0.1


def simulate(x):
    """Final (object 1, object 2, hand 1, hand 2) positions of a push with native inputs x."""
    world = pw.World()
    objects = (
        world.add_object(pw.square(0.5), OBJECT_STARTS[0]),
        world.add_object(pw.disc(1.0), OBJECT_STARTS[1]),
    )
    noise = np.random.RandomState(NOISE_SEED)
    pushes = []
    for k, spin in ((0, x[12]), (1, x[13])):
        rx, ry, vx, vy, duration, angle = x[6 * k : 6 * k + 6]
        hand = world.add_hand((rx, ry), angle, HAND_HALF_SIZE)
        velocity = (vx + noise.normal(0, NOISE_STD), vy + noise.normal(0, NOISE_STD))
        pushes.append((hand, velocity, spin, pw.steps_of(duration)))
    pw.run(world, pushes)
    return [pw.position(b) for b in objects] + [pw.position(p[0]) for p in pushes]


def evaluate(x, cost):
    """The answer to a request with native inputs x."""
    if len(x) != 14:
        return {"error": f"expected 14 inputs, got {len(x)}"}
    object1, object2, hand1, hand2 = simulate(x)
    to_target = (pw.distance(object1, TARGETS[0]), pw.distance(object2, TARGETS[1]))
    hands = pw.distance(hand1, (x[0], x[1])) + pw.distance(hand2, (x[6], x[7]))
    y = -(to_target[0] + to_target[1])
    answer = {
        "y": y,
        "value": y,
        "metrics": {
            "hand_distance": hands,
            "max_duration": max(x[4], x[10]),
            "object1_to_target": to_target[0],
            "object2_to_target": to_target[1],
        },
    }
    if cost == "hands":
        answer["cost"] = hands + COST_OFFSET
    return answer


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cost", choices=["hands", "none"], default="hands")
    args = parser.parse_args()
    for line in sys.stdin:
        if line.strip():
            request = json.loads(line)
            # Each answer echoes its request's index, which keeps cabo and the program in step.
            answer = {"eval": request["eval"], **evaluate(request["x"], args.cost)}
            print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
