#!/usr/bin/env python3
"""Tuning scikit-learn's gradient boosting on the breast-cancer data set that ships with
scikit-learn, as an external cabo objective whose cost is the training time.

    pip install scikit-learn

Inputs (native units, the spec's bounds): log10 of the learning rate, the number of trees,
the depth of each tree and the row subsample. y is the 3-fold cross-validated accuracy;
cabo measures the wall-clock time of each answer as its cost (`cost: wall_time`), so deep,
many-tree models are dear and a cost model (`log_gp`) learns where. The training is seeded
by the request's seed, so y is the same whenever cabo asks the same evaluation again.
"""
import json
import sys

from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.model_selection import cross_val_score

X, labels = load_breast_cancer(return_X_y=True)

for line in sys.stdin:
    request = json.loads(line)
    log_lr, trees, depth, subsample = request["x"]
    model = GradientBoostingClassifier(
        learning_rate=10**log_lr,
        n_estimators=int(round(trees)),
        max_depth=int(round(depth)),
        subsample=subsample,
        random_state=request["seed"] % 2**32,
    )
    accuracy = cross_val_score(model, X, labels, cv=3).mean()
    print(f"eval {request['eval']}: {model.get_params()} -> {accuracy:.4f}", file=sys.stderr)
    answer = {"eval": request["eval"], "y": accuracy, "metrics": {"trees": int(round(trees))}}
    print(json.dumps(answer), flush=True)
