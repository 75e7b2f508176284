"""The push world of Wang & Jegelka (2017) on Box2D 2.3: hands that push objects on a table.

A plane without gravity (Box2D's table seen from above): a static base that every other
body is tied to by a friction joint, which is what slows bodies down (the table's friction),
objects (a square or a disc), and hands (rectangles) that a velocity controller drives.
The constants are those of the authors' public code, so the physics is theirs; the code
is cabo's own. Both robot-pushing objectives (two_robots.py, seed 000; energy_push.py,
seed 001) build on it.

A hand's controller asks, at every step it is active, for the force (and torque) that would
bring its velocity to the commanded one: force = mass · (v_cmd − v) · gain. When a hand's
duration ends it stops being driven and coasts; everything then moves for
`COAST_STEPS` more steps, so objects come (nearly) to rest before they are measured.
"""
import math

from Box2D import b2CircleShape, b2PolygonShape, b2Vec2, b2World

# Simulation: 100 steps per time unit, 10 velocity and 10 position iterations.
TIME_STEP = 1.0 / 100
VELOCITY_ITERATIONS = 10
POSITION_ITERATIONS = 10
# Steps every body keeps moving after the last hand stops being driven.
COAST_STEPS = 100
# The table: a static 1000 × 1000 box, far larger than any push.
TABLE_HALF_SIZE = 500.0
# Objects: light and slippery, held back by a friction joint with the table.
OBJECT_DENSITY = 0.05
OBJECT_FRICTION = 0.01
OBJECT_JOINT_FORCE = 5.0
OBJECT_JOINT_TORQUE = 2.0
# Hands: rectangles driven by a velocity controller with this force gain.
HAND_DENSITY = 0.1
HAND_FRICTION = 0.1
HAND_JOINT_FORCE = 2.0
HAND_JOINT_TORQUE = 2.0
HAND_FORCE_GAIN = 30.0
HAND_TORQUE_GAIN = 30.0


def steps_of(duration):
    """Steps a hand is driven for a duration in time units (the reference's int(10 t))."""
    return int(10 * duration)


class World:
    """A Box2D world with its table; bodies are added by the methods below."""

    def __init__(self):
        self.world = b2World(gravity=(0.0, 0.0), doSleep=True)
        self.table = self.world.CreateStaticBody(
            position=(0, 0), shapes=b2PolygonShape(box=(TABLE_HALF_SIZE, TABLE_HALF_SIZE))
        )

    def _hold(self, body, max_force, max_torque):
        # A joint's bodies do not collide with each other, so the table only brakes them.
        self.world.CreateFrictionJoint(
            bodyA=self.table, bodyB=body, maxForce=max_force, maxTorque=max_torque
        )

    def add_object(self, shape, position):
        """An object (a b2PolygonShape or b2CircleShape) resting at `position`."""
        body = self.world.CreateDynamicBody(position=position)
        body.CreateFixture(shape=shape, density=OBJECT_DENSITY, friction=OBJECT_FRICTION)
        self._hold(body, OBJECT_JOINT_FORCE, OBJECT_JOINT_TORQUE)
        return body

    def add_hand(self, position, angle, half_size):
        """A rectangular hand (half-extents `half_size`) at `position`, turned by `angle`."""
        body = self.world.CreateDynamicBody(position=position, angle=angle)
        body.CreateFixture(
            shape=b2PolygonShape(box=half_size), density=HAND_DENSITY, friction=HAND_FRICTION
        )
        self._hold(body, HAND_JOINT_FORCE, HAND_JOINT_TORQUE)
        return body

    def step(self):
        """Advances the world by one time step."""
        self.world.Step(TIME_STEP, VELOCITY_ITERATIONS, POSITION_ITERATIONS)


def square(half_side):
    """A square object's shape."""
    return b2PolygonShape(box=(half_side, half_side))


def disc(radius):
    """A round object's shape."""
    return b2CircleShape(radius=radius)


def drive(hand, velocity, spin):
    """One step of a hand's controller: force and torque toward the commanded motion."""
    torque = hand.mass * (spin - hand.angularVelocity) * HAND_TORQUE_GAIN
    hand.ApplyTorque(torque, wake=True)
    # Box2D's own single-precision vectors, as in the reference controller.
    force = hand.mass * (b2Vec2(velocity) - hand.linearVelocity) * HAND_FORCE_GAIN
    hand.ApplyForce(force, hand.position, wake=True)


def run(world, pushes):
    """Simulates pushes, each (hand, velocity, spin, steps): hand k is driven for its steps,
    then the world coasts for COAST_STEPS after the longest push."""
    total = max(steps for _, _, _, steps in pushes) + COAST_STEPS
    for t in range(total):
        for hand, velocity, spin, steps in pushes:
            if t < steps:
                drive(hand, velocity, spin)
        world.step()


def position(body):
    """A body's position as a pair of floats."""
    return (float(body.position[0]), float(body.position[1]))


def distance(a, b):
    """Euclidean distance between two points of the plane."""
    return math.hypot(a[0] - b[0], a[1] - b[1])
