#!/usr/bin/env bash
# A real single-node SLURM (Debian's slurm-wlm 22.05 + munge) in a scratch folder, for the cluster
# tests: `local_slurm.sh start DIR` writes DIR/slurm.conf, starts munged, slurmctld and slurmd as
# root with every state, spool, pid, log and socket file under DIR, and waits until the node is idle;
# `local_slurm.sh stop DIR` stops exactly those daemons (by the pids in DIR). Clients find the
# cluster through SLURM_CONF=DIR/slurm.conf. Recipe: ../shared/spec/snakemake-notes.md section 9.
#
# Two partitions share the one node: `cpu` (default) and `gpu`, the names profiles/slurm/partitions.yaml
# uses. The node declares one GPU so that a job asking for --gpus=1 is scheduled, lands in the gpu
# partition and shows gres/gpu:1 in its allocation on a machine without a GPU. SLURM's gpu plugin
# drops a GPU that has no device file, so gres.conf names /dev/null: the job sees
# CUDA_VISIBLE_DEVICES=0 but no device, and the tests' jobs run on the CPU.
set -euo pipefail

cmd=${1:?usage: local_slurm.sh start|stop DIR}
dir=$(realpath -m "${2:?usage: local_slurm.sh start|stop DIR}")

# The job-step plugin starts each job's srun without the SLURM_* variables (SLURM_CONF included), so
# srun inside a job reads the default /etc/slurm/slurm.conf: while the cluster runs, that is a link
# to DIR/slurm.conf. An existing slurm.conf there (a real cluster's) is never touched.
SYSTEM_CONF=/etc/slurm/slurm.conf

stop() {
    # Jobs first: a job step (slurmstepd) outlives slurmd. Only this cluster's jobs (its own conf).
    if [[ -s $dir/slurmctld.pid ]]; then
        SLURM_CONF="$dir/slurm.conf" timeout 5 scancel --quiet --user=root 2> /dev/null || true
        for _ in $(seq 50); do
            [[ -z $(SLURM_CONF="$dir/slurm.conf" timeout 5 squeue -h -t running,completing 2> /dev/null) ]] && break
            sleep 0.2
        done
    fi
    if [[ -L $SYSTEM_CONF && $(readlink "$SYSTEM_CONF") == "$dir/slurm.conf" ]]; then
        rm -f "$SYSTEM_CONF"
    fi
    for name in slurmd slurmctld munged; do
        pidfile="$dir/$name.pid"
        [[ -s $pidfile ]] || continue
        pid=$(cat "$pidfile")
        kill "$pid" 2> /dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2> /dev/null || true
        rm -f "$pidfile"
    done
}

# A link left by an earlier run of this script whose cluster is gone (a killed test).
stale_link() {
    [[ -L $SYSTEM_CONF ]] || return 1
    local target
    target=$(readlink "$SYSTEM_CONF")
    [[ -e $target ]] || return 0
    grep -q "^# local_slurm.sh" "$target" || return 1
    local pidfile
    pidfile="$(dirname "$target")/slurmctld.pid"
    ! { [[ -s $pidfile ]] && kill -0 "$(cat "$pidfile")" 2> /dev/null; }
}

start() {
    for exe in munged slurmctld slurmd sbatch; do
        command -v "$exe" > /dev/null || { echo "local_slurm.sh: $exe not found (apt-get install slurm-wlm munge)" >&2; exit 3; }
    done
    if stale_link; then
        rm -f "$SYSTEM_CONF"
    fi
    if [[ -e $SYSTEM_CONF || -L $SYSTEM_CONF ]]; then
        echo "local_slurm.sh: $SYSTEM_CONF exists; this script would not replace it" >&2
        exit 3
    fi
    mkdir -p "$dir"/{state,spool,log}
    host=$(hostname -s)
    cpus=$(nproc)
    mem_mb=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 9 / 10 ))

    # Our own munged: own socket, pid, log and seed files; the key the munge package generated.
    munged --force --socket="$dir/munge.socket" --pid-file="$dir/munged.pid" \
        --log-file="$dir/log/munged.log" --seed-file="$dir/munge.seed" --key-file=/etc/munge/munge.key

    cat > "$dir/slurm.conf" <<CONF
# local_slurm.sh: a throwaway single-node cluster (tests/cluster/local_slurm.sh)
ClusterName=local
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=${SLURMCTLD_PORT:-6817}
SlurmdPort=${SLURMD_PORT:-6818}
AuthType=auth/munge
AuthInfo=socket=$dir/munge.socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
MpiDefault=none
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
# Finished jobs stay visible to squeue (the plugin's status command here) for 5 minutes.
MinJobAge=300
ReturnToService=2
NodeName=$host CPUs=$cpus RealMemory=$mem_mb Gres=gpu:1 State=UNKNOWN
PartitionName=cpu Nodes=$host Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=$host Default=NO MaxTime=INFINITE State=UP
CONF
    # slurmd reads gres.conf beside slurm.conf (see the header for why /dev/null).
    echo "NodeName=$host Name=gpu Count=1 File=/dev/null" > "$dir/gres.conf"
    export SLURM_CONF="$dir/slurm.conf"
    mkdir -p "$(dirname "$SYSTEM_CONF")"
    ln -s "$dir/slurm.conf" "$SYSTEM_CONF"
    slurmctld -i   # -i: ignore state left by an earlier cluster in this folder
    slurmd
    for _ in $(seq 100); do
        if sinfo -h -N -o %t 2> /dev/null | grep -qx idle; then
            sinfo
            return 0
        fi
        sleep 0.2
    done
    echo "local_slurm.sh: the node did not come up idle; logs in $dir/log" >&2
    tail -n 20 "$dir"/log/*.log >&2 || true
    stop
    exit 1
}

case $cmd in
    start) start ;;
    stop) stop ;;
    *) echo "usage: local_slurm.sh start|stop DIR" >&2; exit 2 ;;
esac
