#!/usr/bin/env python3
"""Runs a Python objective in an environment that has what its requirements.txt lists.

    python3 launch.py DIR/objective.py [arguments for objective.py ...]

The requirements are DIR/requirements.txt, beside the objective. The environment is made
once, on first use, under the user's cache directory ($XDG_CACHE_HOME or
~/.cache)/cabo/python/<hash of requirements.txt>, so a fresh machine needs only python3
with its venv module, the user's own Python is left alone, and objectives with the same
requirements share one environment. Runs that start together wait for the one that builds
it. A relative DIR is relative to the working directory, which cabo sets to the spec file's
directory.
"""
import fcntl
import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

if len(sys.argv) < 2:
    sys.exit("usage: launch.py DIR/objective.py [arguments ...]")
objective = Path(sys.argv[1]).resolve()
requirements = objective.parent / "requirements.txt"
digest = hashlib.sha256(requirements.read_bytes()).hexdigest()[:16]
cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
env = cache / "cabo" / "python" / digest
python = env / "bin" / "python"
ready = env / ".ready"

if not ready.exists():
    env.parent.mkdir(parents=True, exist_ok=True)
    with open(env.parent / f"{digest}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not ready.exists():
            # The installation's output goes to a log beside the environment, not to standard
            # error: that is the run's log, which must read the same whichever run happened to
            # install (a resumed run's log equals an uninterrupted one's). A failure shows it.
            install_log = env.parent / f"{digest}.install.log"
            venv.EnvBuilder(with_pip=True, clear=True).create(env)
            with open(install_log, "w") as out:
                status = subprocess.call(
                    [str(python), "-m", "pip", "install", "--quiet", "-r", str(requirements)],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            if status != 0:
                sys.stderr.write(install_log.read_text())
                sys.exit(f"installing {requirements} into {env} failed (log: {install_log})")
            ready.touch()

os.execv(str(python), [str(python), str(objective), *sys.argv[2:]])
