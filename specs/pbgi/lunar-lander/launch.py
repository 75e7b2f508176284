#!/usr/bin/env python3
"""Starts objective.py in a Python environment that has what requirements.txt lists.

The environment is made once, on first use, under the user's cache directory
($XDG_CACHE_HOME or ~/.cache)/cabo/python/<hash of requirements.txt>, so a fresh machine
needs only python3 with its venv module, and the user's own Python is left alone. Runs that
start together wait for the one that builds it. Arguments are passed on to objective.py.
"""
import fcntl
import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

here = Path(__file__).resolve().parent
requirements = here / "requirements.txt"
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
            print(f"installing {requirements} into {env} (once)", file=sys.stderr, flush=True)
            venv.EnvBuilder(with_pip=True, clear=True).create(env)
            # pip's own output goes to standard error: standard output carries answers only.
            subprocess.check_call(
                [str(python), "-m", "pip", "install", "--quiet", "-r", str(requirements)],
                stdout=sys.stderr,
            )
            ready.touch()

os.execv(str(python), [str(python), str(here / "objective.py"), *sys.argv[1:]])
