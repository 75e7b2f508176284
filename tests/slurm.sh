#!/usr/bin/env bash
# A real Slurm round trip: install slurmctld, slurmd and munge from Debian's packages, start a
# single-node cluster on localhost (as root, without systemd), submit `cargo xtask slurm`'s job
# array for the quickstart smoke spec (once in fixed shards, once as workers sharing the sweep
# through run locks), wait for it and its dependent report job, and check that the merged
# results and report equal a local run's byte for byte; then reproduce a fixture paper with
# `slurm --reproduce`, round by round, to its page.
#
# Run from anywhere: bash tests/slurm.sh   (needs root; takes a few minutes the first time).
# `.ci/run` runs it; where it cannot run (not root, no packages) it exits 77 and says why.
set -euo pipefail
cd "$(dirname "$0")/.."

# Exit code 77 means "skipped": the test could not run here, and says why (never a silent pass).
skip() {
    echo "tests/slurm.sh: skipped: $*" >&2
    exit 77
}
if [ "$(id -u)" != 0 ]; then
    skip "it must run as root (it installs packages and starts daemons)"
fi
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    if ! command -v apt-get >/dev/null; then
        skip "Slurm is not installed and there is no apt-get to install slurm-wlm and munge"
    fi
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq slurm-wlm munge >/dev/null; }; then
        skip "slurm-wlm and munge could not be installed from Debian's packages"
    fi
fi

work=$(mktemp -d /tmp/cabo-slurm.XXXXXX)
conf=$work/etc
mkdir -p "$conf" "$work/spool/ctld" "$work/spool/d" "$work/log" "$work/run"
keep=1
cleanup() {
    # Only the daemons this script started, by the PIDs they recorded.
    local started=()
    for f in "$work/run/slurmd.pid" "$work/run/slurmctld.pid" "$work/run/munged.pid"; do
        if [ -s "$f" ]; then
            started+=("$(cat "$f")")
            kill "$(cat "$f")" 2>/dev/null || true
        fi
    done
    for p in "${started[@]}"; do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    done
    if [ "$keep" = 0 ]; then rm -rf "$work"; else echo "logs and results kept in $work" >&2; fi
}
trap cleanup EXIT

# munge: its own key and socket under $work, so a munge already on the machine is untouched.
mkdir -p "$work/munge"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 700 "$work/munge"
chmod 400 "$work/munge/munge.key"
socket=$work/munge/munge.socket
munged --force --key-file="$work/munge/munge.key" --socket="$socket" \
    --pid-file="$work/run/munged.pid" --log-file="$work/log/munged.log" \
    --seed-file="$work/munge/munge.seed"
for _ in $(seq 50); do [ -S "$socket" ] && break; sleep 0.1; done

host=$(hostname -s)
cpus=$(nproc)
cat >"$conf/slurm.conf" <<CONF
ClusterName=cabo-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$work/spool/ctld
SlurmdSpoolDir=$work/spool/d
SlurmctldPidFile=$work/run/slurmctld.pid
SlurmdPidFile=$work/run/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1024 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$conf/slurm.conf

slurmctld -c -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 100); do
    state=$(sinfo -h -N -o '%t' 2>/dev/null || true)
    [ "$state" = idle ] && break
    sleep 0.3
done
if [ "$state" != idle ]; then
    echo "tests/slurm.sh: the node did not come up (state: ${state:-none})" >&2
    tail -n 20 "$work/log/slurmctld.log" "$work/log/slurmd.log" >&2 || true
    exit 1
fi

cargo build --quiet -p xtask
spec=specs/quickstart.yaml
cargo xtask run "$spec" --smoke --out "$work/local" 2>"$work/log/local.err"

# Waits until the jobs `$3` (comma-separated; empty: every job) have left the queue, or
# fails after `$2` seconds naming `$1`.
wait_for_jobs() {
    local deadline=$((SECONDS + $2))
    while [ -n "$(squeue -h ${3:+-j "$3"} 2>/dev/null)" ]; do
        if [ $SECONDS -gt $deadline ]; then
            echo "tests/slurm.sh: $1: jobs still queued after $2 s" >&2
            squeue >&2
            return 1
        fi
        sleep 1
    done
}

# Submits the quickstart smoke sweep as job `$1` with the extra `slurm` flags `$2…`, waits
# for the array and the report job, and checks the merged results against the local run's.
sweep_on_slurm() {
    local job=$1
    shift
    cargo xtask slurm "$spec" --smoke --shards 3 --concurrency 2 --cpus-per-task 1 \
        --out "$work/$job-results" --dir "$work/$job-jobs" --job-name "$job" "$@"
    local submitted array report
    submitted=$(bash "$work/$job-jobs/$job.submit.sh")
    echo "$submitted"
    array=$(echo "$submitted" | sed -n 's/^array job \([0-9]*\).*/\1/p')
    report=$(echo "$submitted" | sed -n 's/.*report job \([0-9]*\).*/\1/p')
    wait_for_jobs "$job" 600 "$array,$report"
    local fail=0 logs=$work/$job-jobs/logs tasks
    tasks=$(ls "$logs" | grep -c "^$job-[0-9]*_[0-9]*\.out$" || true)
    if [ "$tasks" != 3 ]; then
        echo "tests/slurm.sh: $job: expected logs of 3 array tasks, found $tasks" >&2
        fail=1
    fi
    # Every run was executed by exactly one task (5 policies × 2 replications).
    local executed
    executed=$(cat "$logs/$job"-[0-9]*_[0-9]*.out | sed -n 's/^quickstart: \([0-9]*\) run(s) executed.*/\1/p' |
        awk '{ n += $1 } END { print n + 0 }')
    if [ "$executed" != 10 ]; then
        echo "tests/slurm.sh: $job: the tasks executed $executed runs, expected 10" >&2
        fail=1
    fi
    if ! ls "$logs/$job"-report-*.out >/dev/null 2>&1; then
        echo "tests/slurm.sh: $job: the report job left no log (did it run?)" >&2
        fail=1
    fi
    if ! diff -r -x '*.times.jsonl' "$work/local" "$work/$job-results"; then
        echo "tests/slurm.sh: $job: the merged Slurm results differ from the local run" >&2
        fail=1
    fi
    # `--smoke` results live in the spec's `smoke/` folder.
    for f in run.json report.md summary.csv report.svg report.png; do
        [ -s "$work/$job-results/quickstart/smoke/$f" ] || { echo "$job: missing quickstart/smoke/$f" >&2; fail=1; }
    done
    if [ $fail != 0 ]; then
        tail -n 30 "$logs"/* >&2 || true
        return 1
    fi
}

# `slurm --reproduce`: the gallery's fixture paper (one spec, looks at 4 and 8) reproduced
# round by round, each round planning, submitting its arrays and chaining the next on them,
# until nothing is left to run and the last round writes the page.
reproduce_on_slurm() {
    local repo=$work/repo xtask
    xtask=$(pwd)/target/debug/xtask
    # The gallery's fixture repository: one spec, EI against random search, looks at 4 and 8.
    cp -r crates/cabo-gallery/fixture "$repo"
    local out=$work/rounds-results jobs=$work/rounds-jobs
    (cd "$repo" && "$xtask" slurm --reproduce 900 --full --shards 2 --cpus-per-task 1 \
        --out "$out" --dir "$jobs" --binary "$xtask")
    sbatch --parsable "$jobs/cabo-reproduce-900.round.sbatch" >/dev/null
    # Every job: the rounds submit their arrays and the next round themselves.
    wait_for_jobs rounds 900 ""
    local fail=0 rounds
    rounds=$(ls -d "$jobs"/round-* | wc -l)
    echo "rounds: $rounds round(s); their plans:"
    cat "$jobs"/round-*/plan.txt
    # Round 1 runs the first look (4 replications); the last round finds nothing to run.
    if [ "$rounds" -lt 2 ] || [ ! -s "$jobs/round-1/plan.txt" ] || [ -s "$jobs/round-$rounds/plan.txt" ]; then
        echo "tests/slurm.sh: rounds: expected planned rounds ending in an empty plan, found $rounds" >&2
        fail=1
    fi
    if ! grep -q "every claim is decided or at its cap" "$jobs"/logs/cabo-reproduce-900-*.out; then
        echo "tests/slurm.sh: rounds: no round says it is done" >&2
        fail=1
    fi
    if [ -n "$(cd "$repo" && "$xtask" reproduce 900 --full --list --out "$out")" ]; then
        echo "tests/slurm.sh: rounds: runs are still planned after the last round" >&2
        fail=1
    fi
    if ! grep -q "ei-beats-random" "$repo/docs/reproductions/900-f.md" 2>/dev/null; then
        echo "tests/slurm.sh: rounds: the last round wrote no page" >&2
        fail=1
    fi
    if [ $fail != 0 ]; then
        tail -n 30 "$jobs"/logs/* "$jobs"/round-*/logs/* >&2 || true
        return 1
    fi
}

# Fixed shards, then workers sharing the whole sweep through run locks, then a paper
# reproduced in rounds.
sweep_on_slurm shards
sweep_on_slurm workers --workers
reproduce_on_slurm
keep=0
echo "slurm: 3 passed, 0 failed"
