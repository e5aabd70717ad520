#!/bin/sh
# Slurm TaskProlog: starts a job's tasks with migscope's activity probe when the job asks for it
# (submitted with MIGSCOPE_ACTIVITY=1 in its environment, e.g. `sbatch --export=ALL,MIGSCOPE_ACTIVITY=1`),
# so that the node's exporter (`migscope exporter --activity-socket /run/migscope/activity.sock`)
# charges each task by its own kernel time, under MPS too (docs/exporter.md, "The activity probe").
# Install: TaskProlog=/etc/slurm/migscope-activity-taskprolog.sh in slurm.conf, on every GPU node.
# A TaskProlog's standard output sets the task's environment: "export NAME=value" lines.
# Where the probe and libcupti are, from /etc/slurm/migscope-activity.conf when it exists (shell
# assignments), else these defaults.
MIGSCOPE_PROBE=/usr/local/lib/libmigscope-activity.so
MIGSCOPE_ACTIVITY_SOCKET=/run/migscope/activity.sock
CUPTI_DIR=/usr/local/cuda/lib64
conf=${MIGSCOPE_ACTIVITY_CONF:-/etc/slurm/migscope-activity.conf}
[ -r "$conf" ] && . "$conf"

[ "${MIGSCOPE_ACTIVITY:-0}" = 1 ] || exit 0
if [ ! -r "$MIGSCOPE_PROBE" ]; then
    # Said in the task's output; the job runs without the probe.
    echo "print migscope: no activity probe at $MIGSCOPE_PROBE; this task runs without it"
    exit 0
fi
echo "export CUDA_INJECTION64_PATH=$MIGSCOPE_PROBE"
echo "export MIGSCOPE_ACTIVITY_SOCKET=$MIGSCOPE_ACTIVITY_SOCKET"
echo "export LD_LIBRARY_PATH=$CUPTI_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The job the probe names, for an exporter run with --profiles (docs/exporter.md): submit with
# MIGSCOPE_JOB=workload:mode:batch (or a command's profiled name); the task inherits it as is.
exit 0
