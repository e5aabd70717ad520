// A plan as Slurm's files: configuration lines, one batch script per job and the submit script.
#include "report/slurm_output.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>
#include <utility>

#include "core/error.h"
#include "core/text.h"
#include "report/deploy_output.h"
#include "report/slurm_gres.h"

namespace migscope::report {
namespace {

bool control(char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
}

// A comment's text: control characters (none pass check_job_name, but this is output) as '?'.
std::string comment_text(std::string_view text) {
    std::string out(text);
    std::replace_if(out.begin(), out.end(), control, '?');
    return out;
}

std::string gpu_list(const std::vector<size_t>& gpus) {
    std::vector<std::string> items;
    for (const size_t g : gpus)
        items.push_back(std::to_string(g));
    return text::join(items, ", ");
}

// The GRES type of each profile of the plan's layouts. Two profiles of different sizes must
// not share one: a job would get either.
std::map<std::string, std::string> gres_types(const plan::Problem& problem,
                                              const plan::Candidate& c, const SlurmOptions& o) {
    std::map<std::string, std::string> types;          // profile -> type
    std::map<std::string, const mig::Profile*> owner;  // type -> a profile with it
    for (const plan::GpuPlan& gpu : c.plan) {
        if (!gpu.layout)
            continue;
        for (const mig::Instance& i : gpu.layout->instances) {
            if (types.count(i.profile))
                continue;
            const mig::Profile& p = problem.model.require(i.profile);
            const std::string type = slurm_gres_type(problem.model, p, o.gres_type);
            const auto [it, added] = owner.emplace(type, &p);
            if (!added && (it->second->compute_slices != p.compute_slices ||
                           it->second->memory_slices != p.memory_slices))
                throw input_error("--slurm-gres-type: " + it->second->name + " and " + p.name +
                                  " both become '" + type +
                                  "': give each partition size its own type");
            types[i.profile] = type;
        }
    }
    return types;
}

// Gres= of one layout: "gpu:TYPE:COUNT,..." in the layout's order, counts of profiles that share
// a type added; "gpu:1" for a whole GPU.
std::string gres_counts(const plan::GpuPlan& gpu, const std::map<std::string, std::string>& types) {
    if (!gpu.layout)
        return "gpu:1";
    std::vector<std::pair<std::string, unsigned>> counts;
    for (const auto& [profile, count] : profile_counts(*gpu.layout)) {
        const std::string& type = types.at(profile);
        auto it = std::find_if(counts.begin(), counts.end(),
                               [&](const auto& t) { return t.first == type; });
        if (it == counts.end())
            counts.emplace_back(type, count);
        else
            it->second += count;
    }
    std::vector<std::string> items;
    for (const auto& [type, count] : counts)
        items.push_back("gpu:" + type + ":" + std::to_string(count));
    return text::join(items, ",");
}

std::string header(const plan::Candidate& c) {
    return "# migscope plan for Slurm: " + comment_text(c.name) + "\n";
}

std::string gres_autodetect(const plan::Candidate& c) {
    return header(c) +
           "# gres.conf for a Slurm built with NVML (its gpu/nvml plugin): slurmd finds the MIG\n"
           "# devices and names their types as slurm.conf's Gres= lines do. A Slurm without it\n"
           "# (Debian's) finds nothing and the node goes INVAL: use gres-explicit.conf there.\n"
           "AutoDetect=nvml\n";
}

std::string gres_explicit(const plan::Candidate& c,
                          const std::vector<std::pair<std::string, std::vector<size_t>>>& configs,
                          const std::map<std::string, std::string>& types) {
    std::ostringstream out;
    out << header(c)
        << "# gres.conf for a Slurm without NVML: every device with its files. Replace\n"
        << "# NODES_n as in slurm.conf. The lines are a node's first GPU (/dev/nvidia0):\n"
        << "# repeat them for each further GPU with its own device file. A MIG device's files\n"
        << "# are its GPU's and the nvidia-caps files of its GPU instance and compute instance:\n"
        << "# replace GI_MINOR and CI_MINOR with their minors once the layout is applied\n"
        << "# (`nvidia-smi mig -lgi` gives each instance's profile and id G, and\n"
        << "# /proc/driver/nvidia-caps/mig-minors the minors of gpu0/giG/access and\n"
        << "# gpu0/giG/ci0/access). Jobs are confined to their device only with\n"
        << "# ConstrainDevices=yes in cgroup.conf (TaskPlugin=task/cgroup).\n";
    for (size_t i = 0; i < configs.size(); ++i) {
        const plan::GpuPlan& gpu = c.plan[configs[i].second.front()];
        const std::string node = "NodeName=NODES_" + std::to_string(i + 1) + " Name=gpu";
        out << "# " << configs[i].first << ": planned GPU"
            << (configs[i].second.size() > 1 ? "s " : " ") << gpu_list(configs[i].second) << "\n";
        if (!gpu.layout) {
            out << node << " File=/dev/nvidia0\n";
            continue;
        }
        for (const auto& [profile, count] : profile_counts(*gpu.layout)) {
            for (unsigned k = 0; k < count; ++k)
                out << node << " Type=" << types.at(profile)
                    << " MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-capGI_MINOR,"
                       "/dev/nvidia-caps/nvidia-capCI_MINOR\n";
        }
    }
    return out.str();
}

std::string slurm_conf(const plan::Candidate& c,
                       const std::vector<std::pair<std::string, std::vector<size_t>>>& configs,
                       const std::map<std::string, std::string>& types, const SlurmOptions& o) {
    std::ostringstream out;
    out << header(c)
        << "# Lines to merge into slurm.conf. Replace each NODES_n with the nodes that get that\n"
        << "# layout (every GPU of a node gets it). The counts are one GPU's: a node with G such\n"
        << "# GPUs has G times each. The MIG types are named as slurmd reports them\n"
        << "# (`slurmd -G`): --slurm-gres-type " << comment_text(o.gres_type) << ".\n"
        << "# The feature is the layout: each script asks for it (--constraint), so that a\n"
        << "# whole-GPU job (gpu:1) never gets a MIG device of another node.\n"
        << "GresTypes=gpu\n";
    for (size_t i = 0; i < configs.size(); ++i) {
        out << "# " << configs[i].first << ": planned GPU"
            << (configs[i].second.size() > 1 ? "s " : " ") << gpu_list(configs[i].second) << "\n"
            << "NodeName=NODES_" << i + 1 << " Feature=" << configs[i].first
            << " Gres=" << gres_counts(c.plan[configs[i].second.front()], types) << "\n";
    }
    return out.str();
}

std::string batch_script(const DeployJob& job, const std::map<std::string, std::string>& types) {
    std::ostringstream out;
    out << "#!/bin/bash\n"
        << "#SBATCH --job-name=" << job.name << "\n"
        << "#SBATCH --gres=gpu:" << (job.profile.empty() ? "" : types.at(job.profile) + ":")
        << "1\n"
        << "#SBATCH --constraint=" << job.config << "\n"
        << "#SBATCH --nodes=1\n"
        << "#SBATCH --ntasks=1\n"
        << "# job " << shell_quote(comment_text(job.original_name)) << ": planned GPU " << job.gpu
        << ", partition " << job.partition << " ("
        << (job.profile.empty() ? std::string("whole GPU") : job.profile) << " on " << job.config
        << "), queue position " << job.position << " of " << job.queue_length << "\n"
        << "exec";
    for (const std::string& arg : job.argv)
        out << " " << shell_quote(arg);
    out << "\n";
    return out.str();
}

std::string submit_script(const std::vector<DeployJob>& jobs) {
    std::ostringstream out;
    out << "#!/bin/bash\n"
        << "# Submits every job of the plan, from this script's folder. A queue's later jobs "
           "start\n"
        << "# after the one before them ends (--dependency=afterany). The arguments go to every\n"
        << "# sbatch: ./submit.sh --partition=gpu --account=ml\n"
        << "set -euo pipefail\n"
        << "cd \"$(dirname \"$0\")\"\n";
    for (size_t i = 0; i < jobs.size(); ++i) {
        out << "job_" << i + 1 << "=$(sbatch --parsable \"$@\"";
        if (!jobs[i].after.empty()) {
            const auto prev = std::find_if(jobs.begin(), jobs.end(), [&](const DeployJob& j) {
                return j.name == jobs[i].after;
            });
            // --parsable prints ID or ID;CLUSTER.
            out << " --dependency=afterany:${job_" << (prev - jobs.begin()) + 1 << "%%;*}";
        }
        out << " " << jobs[i].name << ".sbatch)\n"
            << "echo \"" << jobs[i].name << " ${job_" << i + 1 << "%%;*}\"\n";
    }
    return out.str();
}

}  // namespace

std::string shell_quote(const std::string& arg) {
    const bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
               std::string_view("@%+=:,./-_").find(c) != std::string_view::npos;
    });
    if (plain)
        return arg;
    if (std::none_of(arg.begin(), arg.end(), control)) {
        std::string out = "'";
        for (const char c : arg)
            out += c == '\'' ? std::string("'\\''") : std::string(1, c);
        return out + "'";
    }
    // bash's ANSI-C quoting: the argument stays on one line of the script.
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out = "$'";
    for (const char c : arg) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '\\' || c == '\'') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (control(c)) {
            out += "\\x";
            out += kHex[u >> 4];
            out += kHex[u & 0xf];
        } else {
            out += c;
        }
    }
    return out + "'";
}

std::vector<DeployFile> plan_slurm(const plan::Problem& problem, const plan::Candidate& c,
                                   const SlurmOptions& o,
                                   const std::vector<protocol::JobSpec>& specs) {
    const std::vector<DeployJob> jobs = deploy_jobs(problem, c, specs);
    const auto configs = configs_of(c.plan);
    const std::map<std::string, std::string> types = gres_types(problem, c, o);
    std::vector<DeployFile> files;
    files.push_back({"gres.conf", gres_autodetect(c)});
    files.push_back({"gres-explicit.conf", gres_explicit(c, configs, types)});
    files.push_back({"slurm.conf", slurm_conf(c, configs, types, o)});
    files.push_back(
        {"mig-parted.yaml", header(c) +
                                "# On the nodes of each NodeName line, before slurmd starts:\n"
                                "#   nvidia-mig-parted apply -f mig-parted.yaml -c CONFIG\n" +
                                mig_parted_document(c.plan)});
    for (const DeployJob& job : jobs)
        files.push_back({job.name + ".sbatch", batch_script(job, types)});
    files.push_back({"submit.sh", submit_script(jobs), true});
    return files;
}

}  // namespace migscope::report
