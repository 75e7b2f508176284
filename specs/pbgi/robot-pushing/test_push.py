#!/usr/bin/env python3
"""Checks of the robot-pushing objectives against what their definitions say.

    python3 ../../python/launch.py test_push.py      (from this directory, or any)

Run by cabo's `cargo test --test robot_pushing`. Each check computes the expected number
independently of the objective's own arithmetic: distances from the simulated final
positions, costs from the hands' and objects' positions, the geometry of pushes that
cannot reach an object.
"""
import json
import math
import subprocess
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import energy_push  # noqa: E402
import two_robots  # noqa: E402

TAU = 2 * math.pi


def two(rx1=-4.0, ry1=4.0, vx1=0.0, vy1=0.0, t1=1.0, a1=0.0,
        rx2=4.0, ry2=4.0, vx2=0.0, vy2=0.0, t2=1.0, a2=0.0, s1=0.0, s2=0.0):
    """A 14-D input, by name; the defaults keep both hands far from both objects."""
    return [rx1, ry1, vx1, vy1, t1, a1, rx2, ry2, vx2, vy2, t2, a2, s1, s2]


# Pushes that reach the objects: hand 1 below the square, driven up through it; hand 2
# beside the disc, driven right into it (hand 1 spinning as it pushes).
PUSHING = two(rx1=0.0, ry1=0.5, vx1=0.0, vy1=5.0, t1=10.0, rx2=-2.5, ry2=-2.0,
              vx2=5.0, vy2=0.0, t2=20.0, a2=math.pi / 2, s1=0.5, s2=0.0)


class TwoRobots(unittest.TestCase):
    def test_the_same_input_gives_the_same_answer(self):
        for x in (PUSHING, two(vx1=3.3, vy1=1.2, t1=29.9, s2=6.0)):
            first = two_robots.evaluate(x, "hands")
            self.assertEqual(json.dumps(first), json.dumps(two_robots.evaluate(x, "hands")))

    def test_a_push_that_reaches_no_object_leaves_both_at_rest(self):
        # Hands far away, pushing away from the objects for 1 time unit.
        x = two(vx1=0.0, vy1=5.0, vx2=5.0, vy2=5.0)
        object1, object2, _, _ = two_robots.simulate(x)
        self.assertEqual(object1, two_robots.OBJECT_STARTS[0])
        self.assertEqual(object2, two_robots.OBJECT_STARTS[1])
        expected = -(math.dist((0, 2), (-4.4185, -4.3709)) + math.dist((0, -2), (-3.7641, -4.4742)))
        self.assertAlmostEqual(two_robots.evaluate(x, "none")["y"], expected, delta=1e-12)

    def test_pushes_move_the_objects_along_the_push(self):
        object1, object2, _, _ = two_robots.simulate(PUSHING)
        self.assertGreater(object1[1] - 2.0, 1.0)  # the square went up
        self.assertLess(abs(object1[0]), 0.5)
        self.assertGreater(object2[0], 1.0)  # the disc went right
        self.assertLess(abs(object2[1] + 2.0), 0.5)

    def test_the_objective_is_minus_the_summed_distances_to_the_targets(self):
        for x in (PUSHING, two(vx1=2.0, vy1=4.0, t1=7.0, rx2=-3.0, ry2=-3.0, vx2=5.0, vy2=2.0, t2=25.0)):
            object1, object2, _, _ = two_robots.simulate(x)
            expected = -(math.dist(object1, (-4.4185, -4.3709)) + math.dist(object2, (-3.7641, -4.4742)))
            answer = two_robots.evaluate(x, "hands")
            self.assertAlmostEqual(answer["y"], expected, delta=1e-12)
            self.assertEqual(answer["value"], answer["y"])

    def test_costs_follow_their_definitions(self):
        x = PUSHING
        _, _, hand1, hand2 = two_robots.simulate(x)
        travelled = math.dist(hand1, (x[0], x[1])) + math.dist(hand2, (x[6], x[7]))
        answer = two_robots.evaluate(x, "hands")
        self.assertGreater(travelled, 5.0)
        self.assertAlmostEqual(answer["cost"], travelled + 0.1, delta=1e-12)
        self.assertAlmostEqual(answer["metrics"]["hand_distance"], travelled, delta=1e-12)
        self.assertEqual(answer["metrics"]["max_duration"], 20.0)
        self.assertNotIn("cost", two_robots.evaluate(x, "none"))
        # Hands commanded to stand still are held by the table's friction: cost 0.1 exactly.
        still = two_robots.evaluate(two(t1=30.0, t2=2.0), "hands")
        self.assertEqual(still["cost"], 0.1)
        self.assertEqual(still["metrics"]["max_duration"], 30.0)

    def test_the_noise_is_drawn_from_a_fixed_seed(self):
        # Hand 1 driven along +y, hand 2 along +x, freely: each moves along its commanded
        # velocity plus the noise, N(0, 0.01²) draws of RandomState(0) in the order hand 1's
        # x, y, hand 2's x, y, so its heading is the noisy velocity's.
        import numpy as np
        e = np.random.RandomState(0).normal(0, 0.01, size=4)
        x = two(vx1=0.0, vy1=5.0, t1=30.0, vx2=5.0, vy2=0.0, t2=30.0)
        _, _, hand1, hand2 = two_robots.simulate(x)
        self.assertGreater(hand1[1] - 4.0, 10.0)
        self.assertGreater(hand2[0] - 4.0, 10.0)
        slope1 = (hand1[0] + 4.0) / (hand1[1] - 4.0)
        slope2 = (hand2[1] - 4.0) / (hand2[0] - 4.0)
        self.assertAlmostEqual(slope1 / (e[0] / (5.0 + e[1])), 1.0, delta=2e-3)
        self.assertAlmostEqual(slope2 / (e[3] / (5.0 + e[2])), 1.0, delta=2e-3)

    def test_the_program_answers_one_json_line_per_request(self):
        requests = "".join(json.dumps({"x": x, "seed": 1, "eval": i}) + "\n"
                           for i, x in enumerate((PUSHING, two(), [0.0] * 3)))
        out = subprocess.run([sys.executable, str(HERE / "two_robots.py")], input=requests,
                             capture_output=True, text=True, check=True).stdout
        lines = out.splitlines()
        self.assertEqual(len(lines), 3)
        self.assertEqual(json.loads(lines[0]),
                         {"eval": 0, **two_robots.evaluate(PUSHING, "hands")})
        self.assertEqual([json.loads(line)["eval"] for line in lines], [0, 1, 2])
        self.assertIn("error", json.loads(lines[2]))


class EnergyPush(unittest.TestCase):
    def answer(self, x, replication=0):
        return energy_push.evaluate({"x": x, "seed": 0, "eval": 0, "replication": replication})

    def test_the_same_input_gives_the_same_answer(self):
        x = [3.0, -4.0, 17.3]
        self.assertEqual(json.dumps(self.answer(x)), json.dumps(self.answer(x)))

    def test_a_push_too_short_to_reach_leaves_the_object_at_rest(self):
        # From (5, 5) the hand must cover about 5.8 before touching the disc; it is driven
        # for 10 steps at speed 5 (0.5) and then coasts against the table's friction.
        self.assertEqual(energy_push.simulate(5.0, 5.0, 1.0), (0.0, 0.0))
        answer = self.answer([5.0, 5.0, 1.0], replication=7)
        self.assertEqual(answer["cost"], 0.1)
        self.assertEqual(answer["metrics"]["pushed"], 0.0)
        self.assertAlmostEqual(answer["y"], -math.hypot(*energy_push.TARGETS[7]), delta=1e-12)

    def test_the_object_moves_away_from_the_hand(self):
        w = energy_push.simulate(3.0, 4.0, 30.0)
        moved = math.hypot(*w)
        self.assertGreater(moved, 3.0)
        # Along -z/|z| = (-0.6, -0.8): a centred push does not turn aside.
        self.assertGreater((-0.6 * w[0] - 0.8 * w[1]) / moved, 0.99)

    def test_objective_and_cost_follow_their_definitions(self):
        for r, x in ((0, [3.0, 4.0, 30.0]), (5, [-2.0, 1.0, 12.0]), (19, [0.5, -4.5, 25.0])):
            w = energy_push.simulate(*x)
            answer = self.answer(x, r)
            self.assertAlmostEqual(answer["y"], -math.dist(w, energy_push.TARGETS[r]), delta=1e-12)
            self.assertAlmostEqual(answer["cost"], math.hypot(*w) + 0.1, delta=1e-12)

    def test_the_replication_chooses_one_of_twenty_fixed_targets(self):
        targets = energy_push.TARGETS
        self.assertEqual(len(set(targets)), 20)
        for t in targets:
            self.assertTrue(all(-5.0 <= c <= 5.0 for c in t), t)
        x = [-2.0, 1.0, 12.0]
        self.assertEqual(self.answer(x, 3), self.answer(x, 23))
        self.assertNotEqual(self.answer(x, 3)["y"], self.answer(x, 4)["y"])
        no_replication = energy_push.evaluate({"x": x, "seed": 0, "eval": 0})
        self.assertIn("replication", no_replication["error"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
