#!/usr/bin/env bash
# Stop the single-node cluster that scripts/slurm/up.sh started in DIR:
# cancel its jobs, then stop slurmd, slurmctld and munged by the PIDs in
# their pidfiles (TERM, then KILL after 10 s). Safe to call twice, on a
# half-started cluster, or on a directory with no cluster; it never kills a
# process by name, only by the recorded PID after checking that the PID is
# still that daemon. Exits 0 unless a daemon survived SIGKILL.
#
#   scripts/slurm/down.sh DIR
set -uo pipefail
[[ $# == 1 ]] || {
	echo "usage: $0 DIR" >&2
	exit 2
}
DIR=$1
[[ -d $DIR ]] || exit 0
DIR=$(cd "$DIR" && pwd)
CONF=$DIR/slurm.conf

# alive PID: the process exists and is not a zombie (an exited daemon may
# linger as a zombie until the sandbox's PID 1 reaps it).
alive() {
	local st
	st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
	[[ -n $st && $st != Z ]]
}

# stop_pid PID NAME: TERM, wait, KILL. The PID must still run NAME.
stop_pid() {
	local pid=$1 name=$2 i
	alive "$pid" || return 0
	local comm
	comm=$(cat "/proc/$pid/comm" 2>/dev/null || true)
	if [[ $comm != "$name"* ]]; then
		echo "slurm/down: pid $pid is '$comm', not $name: the pidfile is stale, leaving it alone" >&2
		return 0
	fi
	kill -TERM "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 100; i++)); do
		alive "$pid" || return 0
		sleep 0.1
	done
	echo "slurm/down: $name (pid $pid) ignored SIGTERM for 10 s: SIGKILL" >&2
	kill -KILL "$pid" 2>/dev/null || true
	for ((i = 0; i < 50; i++)); do
		alive "$pid" || return 0
		sleep 0.1
	done
	echo "slurm/down: $name (pid $pid) survived SIGKILL" >&2
	return 1
}

# stop NAME PIDFILE
stop() {
	local pidfile=$DIR/$2 pid
	[[ -s $pidfile ]] || return 0
	pid=$(tr -dc '0-9' <"$pidfile")
	[[ -n $pid ]] || {
		rm -f "$pidfile"
		return 0
	}
	stop_pid "$pid" "$1" && rm -f "$pidfile"
}

# stepd_pids: the job step daemons listening on sockets in this cluster's
# spool directory.
stepd_pids() {
	[[ -d $DIR/spool ]] && command -v ss >/dev/null || return 0
	ss -xlpn 2>/dev/null | awk -v d="$DIR/spool/" 'index($0, d) { while (match($0, /pid=[0-9]+/)) { print substr($0, RSTART + 4, RLENGTH - 4); $0 = substr($0, RSTART + RLENGTH) } }' | sort -u
}

# descendants PID…: "PID COMM" of every process below the given ones.
descendants() {
	(($#)) || return 0
	ps -eo pid=,ppid=,comm= 2>/dev/null | awk -v roots=" $* " '
		{ parent[$1] = $2; comm[$1] = $3 }
		END {
			n = split(roots, r, " ")
			for (i = 1; i <= n; i++) in_set[r[i]] = 1
			do {
				changed = 0
				for (p in parent) if (!(p in in_set) && (parent[p] in in_set)) { in_set[p] = 1; below[p] = 1; changed = 1 }
			} while (changed)
			for (p in below) print p, comm[p]
		}'
}

rc=0
# 0. The jobs' processes as they are now (below slurmd and the step
#    daemons): whatever of them outlives the steps is stopped at the end,
#    so that nothing started by this cluster keeps running.
roots=$(stepd_pids | xargs)
if [[ -s $DIR/slurmd.pid ]]; then
	roots="$roots $(tr -dc '0-9' <"$DIR/slurmd.pid")"
fi
# shellcheck disable=SC2086 # roots is a list of PIDs
job_procs=$(descendants $roots)

# 1. Cancel every job of this cluster while the controller still runs, so
#    slurmd ends their steps; give them a few seconds to go.
if [[ -f $CONF && -s $DIR/slurmctld.pid ]] && alive "$(tr -dc '0-9' <"$DIR/slurmctld.pid")"; then
	export SLURM_CONF=$CONF
	if [[ -n $(timeout 10 squeue -h -o %i 2>/dev/null) ]]; then
		timeout 10 scancel --partition=debug 2>/dev/null || true
		for ((i = 0; i < 50; i++)); do
			[[ -z $(timeout 10 squeue -h -o %i 2>/dev/null) ]] && break
			sleep 0.2
		done
	fi
fi
# 2. Job step daemons still listening on sockets in this cluster's spool
#    directory (a step slurmd could not end): stop them by PID.
while read -r pid; do
	[[ -n $pid ]] && { stop_pid "$pid" slurmstepd || rc=1; }
done < <(stepd_pids)
# 3. The daemons, node first.
stop slurmd slurmd.pid || rc=1
stop slurmctld slurmctld.pid || rc=1
stop munged munged.pid || rc=1
# 4. Job processes seen in step 0 that are still there (a task that was
#    ending while its step went away), each by PID while it still has the
#    name it had.
while read -r pid comm; do
	[[ -n $pid ]] && { stop_pid "$pid" "$comm" || rc=1; }
done <<<"$job_procs"
exit $rc
