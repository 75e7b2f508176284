#!/usr/bin/env python3
"""Branin as an external cabo objective, with no dependencies.

cabo maximises, so this answers y = -branin(x). Each evaluation also reports what it cost:
evaluations with a larger first input are dearer (1 to 10 units), as if x0 were the size
of a simulation. Requests arrive one JSON line at a time on standard input; answers go to
standard output, one line each, echoing the request's `eval`; anything else we have to say
goes to standard error, which cabo keeps in the run's log.
"""
import json
import math
import sys

for line in sys.stdin:
    request = json.loads(line)
    x0, x1 = request["x"]
    b, c, t = 5.1 / (4 * math.pi**2), 5 / math.pi, 1 / (8 * math.pi)
    f = (x1 - b * x0**2 + c * x0 - 6) ** 2 + 10 * (1 - t) * math.cos(x0) + 10
    cost = 1 + 9 * (x0 + 5) / 15
    print(f"evaluation {request['eval']}: branin = {f:.6f}", file=sys.stderr)
    # A noise-free objective: `value` (what regret is measured with) is y itself.
    print(json.dumps({"eval": request["eval"], "y": -f, "value": -f, "cost": cost}), flush=True)
