#!/usr/bin/env bash
# Start a single-node Slurm cluster with everything under one directory, for
# tests and for trying the job files in deploy/slurm on one machine.
#
#   scripts/slurm/up.sh DIR        # DIR is created if needed; must be empty of a running cluster
#   export SLURM_CONF=DIR/slurm.conf
#   sbatch …; squeue; sinfo
#   scripts/slurm/down.sh DIR      # stops it; safe to call twice
#
# It needs root (slurmd starts jobs as their user) and Debian's slurmctld,
# slurmd, slurm-client (and munge with SLURM_AUTH=munge); they are installed
# with apt-get when missing (SLURM_UP_INSTALL=0 forbids that). No systemd:
# the daemons are started by hand and stopped by the PIDs in their pidfiles
# (scripts/slurm/down.sh). On the last line of stdout it prints
# `export SLURM_CONF=DIR/slurm.conf`.
#
# Environment:
#   SLURM_AUTH        none (default: auth/none + cred/none, fine for a test
#                     cluster on one machine) or munge (a munged of our own
#                     with its own key and socket under DIR)
#   SLURM_PORT        slurmctld's port (default: the first free from 6817);
#                     slurmd takes the next free one after it
#   SLURM_UP_TIMEOUT  seconds to wait for the node to be idle (default 30)
#   SLURM_UP_INSTALL  0: never apt-get install
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)

die() {
	echo "slurm/up: $*" >&2
	exit 1
}
[[ $# == 1 ]] || die "usage: $0 DIR"
[[ $(id -u) == 0 ]] || die "needs root: slurmd launches jobs as their user (no systemd here; daemons run by hand)"
mkdir -p "$1"
DIR=$(cd "$1" && pwd)
CONF=$DIR/slurm.conf
AUTH=${SLURM_AUTH:-none}
case $AUTH in none | munge) ;; *) die "SLURM_AUTH=$AUTH: want none or munge" ;; esac
for f in slurmctld.pid slurmd.pid munged.pid; do
	if [[ -s $DIR/$f ]] && kill -0 "$(cat "$DIR/$f")" 2>/dev/null; then
		die "$DIR already has a running daemon ($f); stop it with scripts/slurm/down.sh $DIR"
	fi
done
T0=$(date +%s.%N)

# --- packages
pkgs=(slurmctld slurmd slurm-client)
[[ $AUTH == munge ]] && pkgs+=(munge)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
	[[ ${SLURM_UP_INSTALL:-1} == 1 ]] && command -v apt-get >/dev/null ||
		die "missing Debian packages: ${missing[*]} (apt-get install -y --no-install-recommends ${missing[*]})"
	echo "slurm/up: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$DIR/apt.log" 2>&1 ||
		{ apt-get update -qq >>"$DIR/apt.log" 2>&1 && apt-get install -y -qq --no-install-recommends "${missing[@]}" >>"$DIR/apt.log" 2>&1; } ||
		{ tail -5 "$DIR/apt.log" >&2; die "apt-get install ${missing[*]} failed"; }
	# Debian's packages try to start the daemons through init scripts; with
	# no init system that fails harmlessly, and nothing of theirs runs.
fi

# --- ports: two free TCP ports on localhost
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
next_free() {
	local p=$1
	while ! port_free "$p"; do
		p=$((p + 1))
		((p < 65000)) || die "no free port from $1"
	done
	echo "$p"
}
CTLD_PORT=$(next_free "${SLURM_PORT:-6817}")
SLURMD_PORT=$(next_free $((CTLD_PORT + 1)))

# --- the node as slurmd sees it (CPUs, sockets, memory), so the node is not
# drained for declaring more than it has.
node=$(slurmd -C 2>/dev/null | head -1) || true
cpus=$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$node")
mem=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$node")
: "${cpus:=$(nproc)}"
: "${mem:=1}"

mkdir -p "$DIR/state" "$DIR/spool" "$DIR/log"
chmod 755 "$DIR"
if [[ $AUTH == munge ]]; then
	# munged refuses a socket below a directory that not everyone may enter.
	d=$(dirname "$DIR")
	while [[ $d != / ]]; do
		[[ $(($(stat -c '%#a' "$d") & 1)) == 1 ]] ||
			die "SLURM_AUTH=munge: munged needs every directory above its socket to be searchable by all, and $d is not (chmod o+x $d, or use a DIR elsewhere, or SLURM_AUTH=none)"
		d=$(dirname "$d")
	done
	mkdir -p "$DIR/munge"
	chmod 755 "$DIR/munge" # munged refuses a socket directory others can write to
	[[ -s $DIR/munge/munge.key ]] || mungekey -c -k "$DIR/munge/munge.key" >/dev/null
	chmod 600 "$DIR/munge/munge.key"
	auth_lines="AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munge.socket.2"
else
	auth_lines="AuthType=auth/none
CredType=cred/none"
fi

cat >"$CONF" <<EOF
# Single-node test cluster made by scripts/slurm/up.sh; everything lives in $DIR.
ClusterName=tracegrid
SlurmctldHost=localhost
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
$auth_lines
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerParameters=batch_sched_delay=0
MpiDefault=none
ReturnToService=2
MaxArraySize=10001
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF

fail_up() {
	echo "slurm/up: $*" >&2
	for l in "$DIR"/log/*.log; do
		[[ -f $l ]] && { echo "--- $l" >&2; tail -15 "$l" >&2; }
	done
	"$HERE/down.sh" "$DIR" >&2 || true
	exit 1
}

if [[ $AUTH == munge ]]; then
	munged --socket="$DIR/munge/munge.socket.2" --key-file="$DIR/munge/munge.key" \
		--pid-file="$DIR/munged.pid" --log-file="$DIR/log/munged.log" \
		--seed-file="$DIR/munge/munged.seed" ||
		fail_up "munged did not start"
fi
export SLURM_CONF=$CONF
# -c: a fresh controller, no state from an earlier run in DIR.
slurmctld -f "$CONF" -c || fail_up "slurmctld did not start"
slurmd -f "$CONF" -N localhost || fail_up "slurmd did not start"

deadline=$(($(date +%s) + ${SLURM_UP_TIMEOUT:-30}))
state=
while :; do
	state=$(sinfo -h -n localhost -o %T 2>/dev/null || true)
	[[ $state == idle ]] && break
	(($(date +%s) < deadline)) || fail_up "node not idle after ${SLURM_UP_TIMEOUT:-30} s (state: ${state:-none})"
	sleep 0.2
done
echo "slurm/up: cluster up in $(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s: node localhost ($cpus CPUs, ${mem} MB), auth/$AUTH, slurmctld :$CTLD_PORT, slurmd :$SLURMD_PORT, in $DIR" >&2
echo "export SLURM_CONF=$CONF"
