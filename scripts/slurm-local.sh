#!/usr/bin/env bash
# A real single-node Slurm cluster on this machine, for the runner's end-to-end tests and for
# trying ./run.sh without a cluster. Debian 12 (Slurm 22.05, munge 0.5), run as root, works
# without systemd and without cgroups.
#
#   scripts/slurm-local.sh [start|stop|restart|status]        (default: start)
#
# start: installs slurmctld/slurmd/slurm-client/munge if missing, writes /etc/slurm/slurm.conf
#        and gres.conf, starts munged, slurmctld, slurmd as plain daemons and waits until the
#        node is idle. Idempotent: a second start with everything up returns at once.
# The node (this host) is in two partitions, h100 (default) and a100, and advertises fake
# GPUs gpu:h100:N and gpu:a100:N (symlinks to /dev/null: Slurm drops GPUs without a device
# file). No slurmdbd: finished jobs stay visible to squeue/scontrol for an hour (MinJobAge)
# and are recorded by jobcomp/filetxt, readable with `sacct -c`.
#
# Environment: REPRO_SLURM_CPUS (CPUs advertised, default 8: more than the cores so that
# several 1-CPU test jobs run at once), REPRO_SLURM_GPUS (fake GPUs per type, default 4),
# REPRO_SLURM_WAIT_S (seconds to wait for the node, default 60).
set -euo pipefail

action=${1:-start}
node=$(hostname -s)
cpus=${REPRO_SLURM_CPUS:-8}
ngpu=${REPRO_SLURM_GPUS:-4}
wait_s=${REPRO_SLURM_WAIT_S:-60}
gpu_types="h100 a100"
conf=/etc/slurm
fakegpu=/var/spool/slurmd-fakegpu
logdir=/var/log/slurm
jobcomp=$logdir/jobcomp.log

say() { echo "slurm-local: $*" >&2; }

# A daemon is ours when its pid file names a live process with the expected command name.
running() {  # running PIDFILE COMM
  local pid
  [ -s "$1" ] || return 1
  pid=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ]
}

stop_daemon() {  # stop_daemon PIDFILE COMM
  local pid i
  if running "$1" "$2"; then
    pid=$(cat "$1")
    say "stopping $2 (pid $pid)"
    kill "$pid"
    for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then say "$2 still alive, SIGKILL"; kill -9 "$pid" || true; fi
  fi
  rm -f "$1"
}

stop_slurm() { stop_daemon /run/slurmd.pid slurmd; stop_daemon /run/slurmctld.pid slurmctld; }

show_status() {
  local line pidfile comm
  for line in "/run/munge/munged.pid munged" "/run/slurmctld.pid slurmctld" "/run/slurmd.pid slurmd"; do
    read -r pidfile comm <<<"$line"
    if running "$pidfile" "$comm"; then echo "$comm running (pid $(cat "$pidfile"))"; else echo "$comm stopped"; fi
  done
  sinfo 2>/dev/null || true
}

install_packages() {
  if command -v slurmctld >/dev/null && command -v slurmd >/dev/null &&
     command -v sbatch >/dev/null && command -v munged >/dev/null; then return 0; fi
  say "installing slurmctld slurmd slurm-client munge"
  # The postinst scripts try to start services; without an init system that only warns.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    slurmctld slurmd slurm-client munge >/dev/null
}

config_changed=0
install_file() {  # install_file PATH < content; sets config_changed when the content differs
  local tmp
  tmp=$(mktemp)
  cat >"$tmp"
  if [ -f "$1" ] && cmp -s "$tmp" "$1"; then rm -f "$tmp"; return 0; fi
  install -m 0644 "$tmp" "$1"
  rm -f "$tmp"
  config_changed=1
  say "wrote $1"
}

write_config() {
  local mem gres="" gresconf="AutoDetect=off" t i
  mem=$(( $(free -m | awk '/^Mem:/{print $2}') - 1024 ))
  mkdir -p "$conf" "$fakegpu" /var/spool/slurmd /var/spool/slurmctld "$logdir" \
           /run/munge /var/lib/munge /var/log/munge
  chown slurm:slurm /var/spool/slurmctld "$logdir"
  chown munge:munge /run/munge /var/lib/munge /var/log/munge
  chmod 0755 /run/munge
  # sacct -c opens the jobcomp file for appending, so non-root users need write access.
  touch "$jobcomp"; chown slurm:slurm "$jobcomp"; chmod 0666 "$jobcomp"
  if [ ! -s /etc/munge/munge.key ]; then mungekey --create --keyfile=/etc/munge/munge.key; fi
  chown munge:munge /etc/munge/munge.key; chmod 0400 /etc/munge/munge.key

  for t in $gpu_types; do
    for i in $(seq 0 $((ngpu - 1))); do ln -sfn /dev/null "$fakegpu/${t}_$i"; done
    gres="${gres:+$gres,}gpu:$t:$ngpu"
    gresconf+=$'\n'"NodeName=$node Name=gpu Type=$t File=$fakegpu/${t}_[0-$((ngpu - 1))]"
  done
  install_file "$conf/gres.conf" <<<"$gresconf"
  install_file "$conf/slurm.conf" <<EOF2
# written by scripts/slurm-local.sh: a one-node test cluster
ClusterName=reprolocal
SlurmctldHost=localhost
AuthType=auth/munge
CredType=cred/munge
SlurmUser=slurm
SlurmdUser=root
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=$logdir/slurmctld.log
SlurmdLogFile=$logdir/slurmd.log
# advertise more CPUs than the cores so several 1-CPU jobs run at once
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
ReturnToService=2
MinJobAge=3600
# finished jobs count against MaxJobCount while MinJobAge keeps them: room for the benchmarks
MaxJobCount=100000
DependencyParameters=kill_invalid_depend
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1024
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$jobcomp
GresTypes=gpu
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus Sockets=1 CoresPerSocket=$cpus ThreadsPerCore=1 RealMemory=$mem Gres=$gres State=UNKNOWN
PartitionName=h100 Nodes=$node Default=YES MaxTime=INFINITE State=UP
PartitionName=a100 Nodes=$node MaxTime=INFINITE State=UP
EOF2
}

start() {
  local t0 state="" i
  t0=$(date +%s%N)
  install_packages
  write_config
  if ! running /run/munge/munged.pid munged; then say "starting munged"; runuser -u munge -- /usr/sbin/munged; fi
  munge -n | unmunge >/dev/null || { say "munge self-test failed"; exit 1; }
  if [ "$config_changed" = 1 ]; then stop_slurm; fi
  if ! running /run/slurmctld.pid slurmctld; then say "starting slurmctld"; /usr/sbin/slurmctld; fi
  if ! running /run/slurmd.pid slurmd; then say "starting slurmd"; /usr/sbin/slurmd; fi
  for i in $(seq $((wait_s * 5))); do
    state=$(sinfo -h -N -n "$node" -o '%T' 2>/dev/null | head -1 || true)
    case "$state" in
      idle|mixed|allocated|completing) break ;;
      # a node left drained/down by an earlier config or test: put it back in service
      *drain*|*inval*|down*) if [ $((i % 10)) = 1 ]; then scontrol update nodename="$node" state=resume 2>/dev/null || true; fi ;;
    esac
    sleep 0.2
  done
  case "$state" in
    idle|mixed|allocated|completing) say "node $node $state after $(( ($(date +%s%N) - t0) / 1000000 )) ms" ;;
    *) say "node not ready (state '$state')"; sinfo -N -o '%N %T %E' >&2 || true
       tail -n 20 "$logdir/slurmctld.log" "$logdir/slurmd.log" >&2 || true; exit 1 ;;
  esac
}

case "$action" in
  start|stop|restart) [ "$(id -u)" = 0 ] || { say "$action needs root"; exit 1; } ;;
esac
case "$action" in
  start) start ;;
  stop) stop_slurm; stop_daemon /run/munge/munged.pid munged ;;
  restart) stop_slurm; stop_daemon /run/munge/munged.pid munged; start ;;
  status) show_status ;;
  *) echo "usage: $0 [start|stop|restart|status]" >&2; exit 2 ;;
esac
