#!/bin/bash
# Slurm Epilog: writes the finished job's GPU energy, as the node's `migscope exporter` attributed
# it to the job's processes (by their cgroup: slurm_job_id), into the AdminComment of the job's
# accounting record (`sacct -j JOB -o JobID,AdminComment%120`).
#
# Install on every GPU node: copy this file, make it executable, and in slurm.conf set
#   Epilog=/etc/slurm/migscope-energy-epilog.sh
# Needs `migscope exporter` running on the node (a systemd unit or `migscope exporter &`),
# Slurm's task/cgroup plugin (TaskPlugin=task/cgroup), which gives each job its cgroup,
# and accounting through slurmdbd (AccountingStorageType=accounting_storage/slurmdbd).
# Settings (the environment, or /etc/slurm/migscope-epilog.conf, which this script sources):
#   MIGSCOPE          the migscope binary (default: migscope in PATH, then /usr/local/bin)
#   MIGSCOPE_EXPORTER the exporter's metrics URL (default http://127.0.0.1:9401/metrics)
#   MIGSCOPE_SETTLE_S seconds to wait first, so that the exporter samples once after the job's
#                     processes ended (default 2: twice the exporter's default --interval-s)
# It never fails the job or drains the node: every problem goes to stderr, and the script exits
# 0. A job with no GPU process records "migscope_energy_j=none".
conf=${MIGSCOPE_EPILOG_CONF:-/etc/slurm/migscope-epilog.conf}
# shellcheck source=/dev/null
[[ -r "$conf" ]] && source "$conf"
migscope=${MIGSCOPE:-$(command -v migscope || echo /usr/local/bin/migscope)}
exporter=${MIGSCOPE_EXPORTER:-http://127.0.0.1:9401/metrics}
settle_s=${MIGSCOPE_SETTLE_S:-2}

log() { echo "migscope-energy-epilog: job ${SLURM_JOB_ID:-?}: $*" >&2; }

if ! [[ "${SLURM_JOB_ID:-}" =~ ^[0-9]+$ ]]; then
    log "no SLURM_JOB_ID: not run by slurmd's Epilog"
    exit 0
fi
sleep "$settle_s"
# kv: one line of migscope's own words and numbers ("migscope_energy_j=1234.5 series=2 gpus=0
# method=..."); exit 1 (no series of this job) still prints the line, with energy "none".
errors_file=$(mktemp)
line=$("$migscope" energy --exporter "$exporter" --match "slurm_job_id=$SLURM_JOB_ID" \
       --format kv 2>"$errors_file")
status=$?
errors=$(head -c 500 "$errors_file")
rm -f "$errors_file"
if [[ $status -gt 1 || -z "$line" ]]; then
    log "migscope energy failed (exit $status): $errors"
    exit 0
fi
# By the Epilog the job has finished: slurmctld refuses `scontrol update` of it ("Job has already
# finished"), so the energy goes into the job's accounting record, which sacctmgr may change after
# completion (needs slurmdbd; AdminComment needs a Slurm administrator: slurmd runs this as root).
# A job on several nodes: each node's epilog writes its own line, and the last one stays.
comment="$(hostname): $line"
if ! sacctmgr -i modify job where jobid="$SLURM_JOB_ID" set AdminComment="$comment" >/dev/null; then
    log "sacctmgr modify job failed (is AccountingStorageType=accounting_storage/slurmdbd?)"
fi
log "$line"
exit 0
