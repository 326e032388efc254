#!/usr/bin/env bash
# Integration test of deploy/slurm on a one-node Slurm cluster on this
# machine: installs slurmctld, slurmd, slurm-client and munge from Debian
# when missing (needs root and apt-get), writes a minimal slurm.conf for
# this host, starts munged, slurmctld and slurmd, submits sweep.sbatch as a
# job array of --shard i/n jobs and merge.sbatch as a job depending on it,
# waits, and compares the merged directory byte for byte with the same
# sweep run unsharded.
#
# Exit status: 0 passed, 1 failed, 77 skipped (Slurm or munge could not be
# installed or started here; the reason is printed). Everything it starts
# (daemons, by their process ids) is stopped on exit, and everything it
# writes is under one temporary directory (kept on failure, printed).
#
# Environment: SHARDS (default 3), FLEETSIM_PARAM (default
# cluster.replicas=2..4:1), FLEETSIM_REPLICATIONS (default 2),
# SLURM_TEST_TIMEOUT_S (default 600), KEEP=1 keeps the directory.
# Measured on a 2-core Debian 12 VM with slurm-wlm 22.05.8: about 30 s to
# install the packages, then about 15 s to run (see deploy/README.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
start=$(date +%s)
say() { echo "slurm-test: $*"; }
skip() {
	say "SKIPPED: $*"
	exit 77
}

shards=${SHARDS:-3}
param=${FLEETSIM_PARAM:-cluster.replicas=2..4:1}
reps=${FLEETSIM_REPLICATIONS:-2}
timeout_s=${SLURM_TEST_TIMEOUT_S:-600}

# 1. Packages.
need() { command -v sbatch && command -v slurmctld && command -v slurmd && command -v munged; } >/dev/null 2>&1
if ! need; then
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		skip "Slurm is not installed and this is not a root shell with apt-get"
	fi
	say "installing slurmctld slurmd slurm-client munge (apt-get)"
	if ! (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		slurmctld slurmd slurm-client munge) >/tmp/slurm-test-apt.log 2>&1; then
		skip "apt-get could not install Slurm (see /tmp/slurm-test-apt.log)"
	fi
	need || skip "Slurm installed but its commands are not on PATH"
fi
if [ "$(id -u)" != 0 ]; then
	skip "starting slurmd needs root"
fi

w=$(mktemp -d /tmp/fleetsim-slurm.XXXXXX)
pids=()
cleanup() {
	rc=$?
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	if [ "$rc" = 0 ] && [ "${KEEP:-}" != 1 ]; then
		rm -rf "$w"
	else
		say "files kept in $w"
	fi
	exit "$rc"
}
trap cleanup EXIT

# 2. munge: reuse a running munged (its socket answers), else start one
# as the munge user on a private socket.
export MUNGE_SOCKET=/run/munge/munge.socket.2
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
	mkdir -p /run/munge /var/log/munge /var/lib/munge
	chown munge: /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
	if [ ! -s /etc/munge/munge.key ]; then
		mkdir -p /etc/munge
		if command -v mungekey >/dev/null 2>&1; then
			mungekey --create --keyfile=/etc/munge/munge.key
		else
			dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null
		fi
		chown munge: /etc/munge/munge.key
		chmod 400 /etc/munge/munge.key
	fi
	runuser -u munge -- munged --foreground >"$w/munged.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 50); do
		munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break
		sleep 0.2
	done
	munge -n 2>/dev/null | unmunge >/dev/null 2>&1 || skip "munged did not start (see $w/munged.log)"
fi

# 3. slurm.conf for this host, everything under $w, ports away from the
# defaults so that a real Slurm on this machine is left alone.
host=$(hostname -s)
node=$(slurmd -C | head -1) # NodeName=host CPUs=… RealMemory=…: what slurmd will find
mkdir -p "$w/state" "$w/spool" "$w/job"  # the scripts make results/ themselves
cat >"$w/slurm.conf" <<EOF
ClusterName=fleetsim-ci
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
StateSaveLocation=$w/state
SlurmdSpoolDir=$w/spool
SlurmctldPidFile=$w/slurmctld.pid
SlurmdPidFile=$w/slurmd.pid
SlurmctldLogFile=$w/slurmctld.log
SlurmdLogFile=$w/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=ci Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$w/slurm.conf"

slurmctld -D -c -f "$SLURM_CONF" >"$w/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$w/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
	state=$(sinfo -h -N -o %t 2>/dev/null | head -1 || true)
	[ "$state" = idle ] && break
	sleep 0.3
done
if [ "${state:-}" != idle ]; then
	tail -5 "$w/slurmctld.log" "$w/slurmd.log" 2>/dev/null || true
	skip "the local Slurm node did not come up (state '${state:-none}'; logs in $w)"
fi
say "Slurm $(sinfo -V | awk '{print $2}') up on $host after $(($(date +%s) - start)) s"

# 4. The study: the default built-in, a short sweep.
go build -o "$w/job/fleetsim" ./cmd/fleetsim
(cd "$w/job" && ./fleetsim scenarios show default >study.toml)
export FLEETSIM_PARAM="$param" FLEETSIM_REPLICATIONS="$reps" FLEETSIM_SHARDS="$shards" FLEETSIM_OUT=results/study

jid=$(sbatch --parsable --chdir="$w/job" --array=1-"$shards" --cpus-per-task=1 "$repo/deploy/slurm/sweep.sbatch")
mid=$(sbatch --parsable --chdir="$w/job" --dependency=afterok:"$jid" "$repo/deploy/slurm/merge.sbatch")
say "submitted array job $jid (--shard 1..$shards/$shards) and merge job $mid"

# The unsharded reference, while the jobs run.
(cd "$w/job" && ./fleetsim sweep study.toml --param "$param" --replications "$reps" --out "$w/whole" --quiet)

deadline=$(($(date +%s) + timeout_s))
while [ -n "$(squeue -h -j "$jid,$mid" -o %i 2>/dev/null)" ]; do
	if [ "$(date +%s)" -gt "$deadline" ]; then
		squeue
		say "FAILED: jobs still queued after ${timeout_s} s"
		exit 1
	fi
	sleep 1
done

merged="$w/job/results/study-merged"
if [ ! -d "$merged" ]; then
	say "FAILED: the merge job wrote nothing; job output:"
	tail -n +1 "$w"/job/slurm-fleetsim-* 2>/dev/null || true
	exit 1
fi
parts=$(ls "$w"/job/results/study/part-*-of-"$shards".json | wc -l)
if [ "$parts" != "$shards" ]; then
	say "FAILED: $parts part files, want $shards"
	exit 1
fi
if ! diff -r "$w/whole" "$merged"; then
	say "FAILED: the merged output differs from the unsharded run"
	exit 1
fi
files=$(find "$merged" -type f | wc -l)
say "PASSED: $shards shards merged by Slurm = the unsharded sweep, byte for byte ($files files) in $(($(date +%s) - start)) s"
