#!/bin/sh
# A one-node Slurm cluster for one test, everything under DIR: munged
# (its key, socket, pid and logs), slurm.conf with ports of its own, the
# spool, state and logs of slurmctld and slurmd. As root (ENVIRONMENT.md).
#
#   slurm.sh start DIR   prints SLURM_CONF=DIR/slurm.conf once the node is idle
#   slurm.sh stop DIR    stops the three daemons by their pid files
set -eu
cmd=${1:?usage: slurm.sh start|stop DIR}
d=${2:?usage: slurm.sh start|stop DIR}
case $cmd in
start)
	host=$(hostname -s)
	port=$((20000 + $$ % 9000))
	mkdir -p "$d/munge" "$d/ctld" "$d/slurmd" "$d/log"
	chmod 0755 "$d"
	head -c 1024 /dev/urandom > "$d/munge/munge.key"
	chown -R munge:munge "$d/munge"
	chmod 0755 "$d/munge"
	chmod 0400 "$d/munge/munge.key"
	runuser -u munge -- /usr/sbin/munged --key-file="$d/munge/munge.key" \
		--socket="$d/munge/munge.socket" --pid-file="$d/munge/munged.pid" \
		--log-file="$d/munge/munged.log" --seed-file="$d/munge/munged.seed"
	cat > "$d/slurm.conf" <<CONF
ClusterName=lbtest
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$d/munge/munge.socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SlurmUser=root
SlurmdUser=root
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
StateSaveLocation=$d/ctld
SlurmdSpoolDir=$d/slurmd
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
NodeName=$host CPUs=$(nproc) RealMemory=1024 State=UNKNOWN
PartitionName=lbtest Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
	export SLURM_CONF="$d/slurm.conf"
	/usr/sbin/slurmctld -f "$SLURM_CONF"
	/usr/sbin/slurmd -f "$SLURM_CONF"
	i=0
	until sinfo -h -o %T 2>/dev/null | grep -qx idle; do
		i=$((i + 1))
		if [ $i -gt 60 ]; then
			echo "slurm.sh: the node is not idle after 30 s:" >&2
			sinfo >&2 || true
			tail -20 "$d/log/slurmctld.log" "$d/log/slurmd.log" >&2 || true
			exit 1
		fi
		sleep 0.5
	done
	echo "SLURM_CONF=$SLURM_CONF" ;;
stop)
	for p in "$d/slurmd.pid" "$d/slurmctld.pid" "$d/munge/munged.pid"; do
		if [ -s "$p" ]; then
			pid=$(cat "$p")
			kill "$pid" 2>/dev/null || true
			i=0
			while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
		fi
	done ;;
*)
	echo "slurm.sh: unknown command '$cmd'" >&2; exit 2 ;;
esac
