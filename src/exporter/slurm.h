// Which Slurm job a process runs in, read from its cgroup (/proc/PID/cgroup).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace migscope::exporter {

// Parses the text of /proc/PID/cgroup for the cgroup Slurm's task/cgroup plugin puts a job's
// processes in:
//   cgroup v2: 0::/system.slice/slurmstepd.scope/job_123/step_0/user/task_0
//              ("NODE_slurmstepd.scope" where one host runs several slurmd)
//   cgroup v1: 4:memory:/slurm/uid_1000/job_123/step_batch/task_0 ("slurm_NODE" likewise)
// The job id's digits, or none when no line is under Slurm's tree (proctrack/linuxproc and
// task/none put no job in a cgroup of its own).
std::optional<std::string> parse_slurm_job_cgroup(std::string_view cgroup_text);

}  // namespace migscope::exporter
