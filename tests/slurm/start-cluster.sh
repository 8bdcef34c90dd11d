#!/bin/sh
# Starts a single-node Slurm cluster of its own on this machine for the
# Slurm tests: its own configuration, state and spool directory in DIR
# (default /tmp/loopc-test-slurm), its own ports (free ones, never the 6817/6818
# of a Slurm installed as a service), its own slurmctld and slurmd; it
# checks that the controller answering its configuration is the one it
# started, and waits until `sinfo` shows the node idle. Authentication
# goes through the machine's munged (started, with a key made when there
# is none, if it is not running).
#
#   tests/slurm/start-cluster.sh [DIR]      then   export SLURM_CONF=DIR/slurm.conf
#   tests/slurm/start-cluster.sh --stop [DIR]
#
# Needs root and the Debian packages slurm-wlm and munge. Idempotent: its
# own cluster already up is left as it is; another cluster on the machine
# is never used, nor touched. Exit status 0: up; 1: it could not start
# (the reason on stderr, with the daemons' logs).
set -eu
stop=0
if [ "${1-}" = --stop ]; then stop=1; shift; fi
dir=${1:-/tmp/loopc-test-slurm}
conf=$dir/slurm.conf
export SLURM_CONF="$conf"

# The pid in DIR/NAME.pid, when that process is alive and is the daemon
# started with this cluster's configuration (not another cluster's).
own_pid() {
  [ -f "$dir/$1.pid" ] || return 1
  pid=$(cat "$dir/$1.pid" 2>/dev/null) || return 1
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" | grep -qF -- "-f $conf" || return 1
  echo "$pid"
}

stop_own() {
  for p in slurmd slurmctld; do
    if pid=$(own_pid "$p"); then kill "$pid" 2>/dev/null || true; fi
  done
}

if [ "$stop" = 1 ]; then
  stop_own
  exit 0
fi

for tool in munged slurmctld slurmd sinfo srun scontrol; do
  command -v "$tool" >/dev/null || { echo "start-cluster: $tool is not installed (apt-get install slurm-wlm munge)" >&2; exit 1; }
done
if [ "$(id -u)" != 0 ]; then
  echo "start-cluster: needs root (slurmd runs jobs as their users)" >&2
  exit 1
fi

# Whether the controller that answers this configuration is this
# cluster's: its own state directory and name, reported by the
# controller itself (`scontrol show config` asks it).
answering_is_own() {
  config=$(scontrol show config 2>/dev/null) || return 1
  echo "$config" | grep -Eq "^StateSaveLocation += $dir/state\$" &&
    echo "$config" | grep -Eq "^ClusterName += loopc-test\$"
}

# Whether this cluster's daemons run and its controller answers.
running() {
  own_pid slurmctld >/dev/null && own_pid slurmd >/dev/null && answering_is_own
}

# Whether the node responds: idle, or busy with jobs (another test
# process may be using the cluster: never restarted then).
responding() {
  sinfo -h -o %T 2>/dev/null | grep -Eqx 'idle|mixed|allocated|completing'
}

# Waits up to 60 s for the node; exit 0 when it responds.
wait_for_node() {
  i=0
  while [ "$i" -lt 60 ]; do
    if responding; then
      exit 0
    fi
    i=$((i + 1))
    sleep 1
  done
}

# One starter at a time (test processes of several checkouts may share DIR).
mkdir -p "$dir"
if command -v flock >/dev/null; then
  exec 9>"$dir/start.lock"
  flock 9
fi

if [ -f "$conf" ] && running; then
  wait_for_node
  echo "start-cluster: the cluster in $dir runs, but its node does not respond; sinfo says: $(sinfo -h -o '%T %E' 2>&1)" >&2
  exit 1
fi
# Whatever of this cluster is left (a daemon that lost its partner) goes.
stop_own
sleep 1

# Whether TCP port $1 is free: nothing listens on it (IPv4 or IPv6).
port_free() {
  hex=$(printf '%04X' "$1")
  ! cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
    awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { found = 1 } END { exit !found }'
}
port=16817
while ! { port_free "$port" && port_free $((port + 1)); }; do
  port=$((port + 2))
  if [ "$port" -gt 17817 ]; then
    echo "start-cluster: no two free TCP ports between 16817 and 17818" >&2
    exit 1
  fi
done

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
# Ports of its own: a Slurm installed as a service listens on 6817/6818.
SlurmctldPort=$port
SlurmdPort=$((port + 1))
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
if ! munge -n >/dev/null 2>&1; then
  if [ ! -s /etc/munge/munge.key ]; then
    mkdir -p /etc/munge
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
  fi
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown -R munge:munge /etc/munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
  chmod 700 /etc/munge; chmod 400 /etc/munge/munge.key
  if id munge >/dev/null 2>&1; then
    su -s /bin/sh munge -c munged 9>&- 2>/dev/null || munged --force 9>&-
  else
    munged --force 9>&-
  fi
fi
munge -n | unmunge >/dev/null || { echo "start-cluster: munged does not answer" >&2; exit 1; }

# Always this cluster's own daemons, whatever else runs on the machine.
# (Without the lock's descriptor: a daemon must not hold it.)
slurmctld -f "$conf" 9>&-
slurmd -f "$conf" 9>&-

# The daemons write their pid files once they run: wait for both, for
# their controller to answer, and for the node.
i=0
while [ "$i" -lt 60 ]; do
  if running && responding; then
    exit 0
  fi
  i=$((i + 1))
  sleep 1
done
if ! answering_is_own; then
  echo "start-cluster: the controller answering $conf is not the one started in $dir" >&2
else
  echo "start-cluster: the node did not respond in 60 s; sinfo says: $(sinfo -h -o '%T %E' 2>&1)" >&2
fi
tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 2>/dev/null || true
stop_own
exit 1
