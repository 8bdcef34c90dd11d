#!/bin/sh
# Starts a single-node Slurm cluster on this machine for the Slurm tests:
# writes a minimal slurm.conf for this host into DIR (default
# /tmp/loopc-slurm), creates a munge key when there is none, starts munged,
# slurmctld and slurmd, and waits until `sinfo` shows the node idle.
#
#   tests/slurm/start-cluster.sh [DIR]      then   export SLURM_CONF=DIR/slurm.conf
#   tests/slurm/start-cluster.sh --stop [DIR]
#
# Needs root and the Debian packages slurm-wlm and munge. Idempotent: a
# cluster already up is left as it is. Exit status 0: up; 1: it could not
# start (the reason on stderr, with the daemons' logs).
set -eu
stop=0
if [ "${1-}" = --stop ]; then stop=1; shift; fi
dir=${1:-/tmp/loopc-slurm}
conf=$dir/slurm.conf
export SLURM_CONF="$conf"

if [ "$stop" = 1 ]; then
  for p in slurmd slurmctld; do
    [ -f "$dir/$p.pid" ] && kill "$(cat "$dir/$p.pid")" 2>/dev/null || true
  done
  exit 0
fi

for tool in munged slurmctld slurmd sinfo srun; do
  command -v "$tool" >/dev/null || { echo "start-cluster: $tool is not installed (apt-get install slurm-wlm munge)" >&2; exit 1; }
done
if [ "$(id -u)" != 0 ]; then
  echo "start-cluster: needs root (slurmd runs jobs as their users)" >&2
  exit 1
fi

if [ -f "$conf" ] && sinfo -h -o %T 2>/dev/null | grep -qx idle; then
  exit 0
fi

mkdir -p "$dir/spool" "$dir/state"
host=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/MemTotal/ { printf "%d", $2 / 1024 / 2 }' /proc/meminfo)
cat > "$conf" <<CONF
ClusterName=loopc-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldPort=6817
SlurmdPort=6818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
# Job records without a database: one line per finished job.
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.log
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
KillWait=5
InactiveLimit=0
MinJobAge=300
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:64
CONF

# munge: a key, then the daemon (its default socket is what srun uses).
if [ ! -s /etc/munge/munge.key ]; then
  mkdir -p /etc/munge
  dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
fi
mkdir -p /run/munge /var/log/munge /var/lib/munge
chown -R munge:munge /etc/munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
chmod 700 /etc/munge; chmod 400 /etc/munge/munge.key
if ! munge -n >/dev/null 2>&1; then
  if id munge >/dev/null 2>&1; then
    su -s /bin/sh munge -c munged 2>/dev/null || munged --force
  else
    munged --force
  fi
fi
munge -n | unmunge >/dev/null || { echo "start-cluster: munged does not answer" >&2; exit 1; }

pgrep -x slurmctld >/dev/null || slurmctld -f "$conf"
pgrep -x slurmd >/dev/null || slurmd -f "$conf"

i=0
while [ "$i" -lt 60 ]; do
  if sinfo -h -o %T 2>/dev/null | grep -qx idle; then
    exit 0
  fi
  i=$((i + 1))
  sleep 1
done
echo "start-cluster: the node did not become idle in 60 s; sinfo says: $(sinfo -h -o '%T %E' 2>&1)" >&2
tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 2>/dev/null || true
exit 1
