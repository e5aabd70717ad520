// A plan as Kubernetes (GPU Operator) deployment files, and the planned jobs every deployment
// runs; YAML through yaml-cpp's emitter.
#include "report/deploy_output.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>

#include "core/error.h"
#include "core/text.h"
#include "core/user_text.h"
#include "core/yaml_fields.h"
#include "mig/mig_parted.h"

namespace migscope::report {
namespace {

constexpr size_t kMaxLabel = 63;
// The whole GPU's config: NVIDIA's name for it, and the GPU Operator's default label value
// (migManager.config.default), which every node without a label gets.
constexpr const char* kMigDisabled = "all-disabled";

bool alnum(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

// FNV-1a, as 8 hex digits: short, stable names for over-long ones.
std::string short_hash(std::string_view text) {
    uint32_t h = 2166136261u;
    for (const char c : text) {
        h ^= static_cast<unsigned char>(c);
        h *= 16777619u;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out(8, '0');
    for (int i = 7; i >= 0; --i, h >>= 4)
        out[static_cast<size_t>(i)] = kHex[h & 0xf];
    return out;
}

// Keeps at most `limit` characters and trims what is not alphanumeric at the end.
std::string cut(std::string text, size_t limit) {
    if (text.size() > limit)
        text.resize(limit);
    while (!text.empty() && !alnum(text.back()))
        text.pop_back();
    return text;
}

std::string format_count(double value) {
    std::ostringstream s;
    s << static_cast<int64_t>(value);
    return s.str();
}

std::string gpu_list(const std::vector<size_t>& gpus) {
    std::vector<std::string> items;
    for (const size_t g : gpus)
        items.push_back(std::to_string(g));
    return text::join(items, ", ");
}

// What a job's node offers it: "nvidia.com/mig-3g.71gb" (mixed strategy) or "nvidia.com/gpu".
std::string k8s_resource(const DeployJob& job) {
    return job.profile.empty() ? "nvidia.com/gpu" : "nvidia.com/mig-" + job.profile;
}

void emit_job(YAML::Emitter& out, const DeployJob& job, const KubernetesOptions& o) {
    out << YAML::BeginMap;
    out << YAML::Key << "apiVersion" << YAML::Value << "batch/v1";
    out << YAML::Key << "kind" << YAML::Value << "Job";
    out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << job.name;
    out << YAML::Key << "namespace" << YAML::Value << o.job_namespace;
    out << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "app.kubernetes.io/managed-by" << YAML::Value << "migscope";
    out << YAML::Key << "nvidia.com/mig.config" << YAML::Value << job.config;
    out << YAML::EndMap;
    out << YAML::Key << "annotations" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "migscope/job-name" << YAML::Value << YAML::DoubleQuoted
        << job.original_name;
    out << YAML::Key << "migscope/gpu" << YAML::Value << YAML::DoubleQuoted
        << std::to_string(job.gpu);
    out << YAML::Key << "migscope/partition" << YAML::Value << YAML::DoubleQuoted
        << std::to_string(job.partition);
    out << YAML::Key << "migscope/profile" << YAML::Value << YAML::DoubleQuoted
        << (job.profile.empty() ? std::string("whole GPU") : job.profile);
    out << YAML::Key << "migscope/queue-position" << YAML::Value << YAML::DoubleQuoted
        << std::to_string(job.position) + "/" + std::to_string(job.queue_length);
    if (!job.after.empty())
        out << YAML::Key << "migscope/after" << YAML::Value << job.after;
    out << YAML::EndMap << YAML::EndMap;

    out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
    // A later job of a queue waits, suspended, until the one before it has finished.
    if (!job.after.empty())
        out << YAML::Key << "suspend" << YAML::Value << true;
    out << YAML::Key << "backoffLimit" << YAML::Value << 0;
    out << YAML::Key << "template" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "app.kubernetes.io/managed-by" << YAML::Value << "migscope";
    out << YAML::EndMap << YAML::EndMap;
    out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "restartPolicy" << YAML::Value << "Never";
    out << YAML::Key << "nodeSelector" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "nvidia.com/mig.config" << YAML::Value << job.config;
    out << YAML::EndMap;
    out << YAML::Key << "containers" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << "job";
    out << YAML::Key << "image" << YAML::Value << o.image;
    out << YAML::Key << "command" << YAML::Value << YAML::BeginSeq;
    for (const std::string& arg : job.argv)
        out << YAML::DoubleQuoted << arg;
    out << YAML::EndSeq;
    out << YAML::Key << "resources" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "limits" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << k8s_resource(job) << YAML::Value << 1;
    out << YAML::EndMap << YAML::EndMap;
    out << YAML::EndMap << YAML::EndSeq;
    out << YAML::EndMap << YAML::EndMap << YAML::EndMap << YAML::EndMap;
}

}  // namespace

std::vector<std::pair<std::string, unsigned>> profile_counts(const mig::Layout& layout) {
    std::vector<std::pair<std::string, unsigned>> out;
    for (const mig::Instance& i : layout.instances) {
        auto it = std::find_if(out.begin(), out.end(),
                               [&](const auto& p) { return p.first == i.profile; });
        if (it == out.end())
            out.emplace_back(i.profile, 1);
        else
            ++it->second;
    }
    return out;
}

std::vector<std::pair<std::string, std::vector<size_t>>> configs_of(const plan::Plan& plan) {
    std::vector<std::pair<std::string, std::vector<size_t>>> out;
    for (size_t g = 0; g < plan.size(); ++g) {
        const std::string name = layout_config_name(plan[g]);
        auto it =
            std::find_if(out.begin(), out.end(), [&](const auto& c) { return c.first == name; });
        if (it == out.end())
            out.push_back({name, {g}});
        else
            it->second.push_back(g);
    }
    return out;
}

std::string mig_parted_document(const plan::Plan& plan) {
    std::vector<mig::MigPartedConfig> configs;
    auto layouts = configs_of(plan);
    if (std::none_of(layouts.begin(), layouts.end(),
                     [](const auto& c) { return c.first == kMigDisabled; })) {
        mig::MigPartedEntry off;
        configs.push_back({kMigDisabled, {off}});
    }
    for (const auto& [name, gpus] : layouts) {
        mig::MigPartedEntry entry;  // devices: all
        const plan::GpuPlan& gpu = plan[gpus.front()];
        entry.mig_enabled = gpu.layout.has_value();
        if (gpu.layout) {
            for (const auto& [profile, count] : profile_counts(*gpu.layout))
                entry.mig_devices[profile] = count;
        }
        configs.push_back({name, {entry}});
    }
    return mig::write_mig_parted(configs);
}

std::vector<mig::MigPartedConfig> merged_mig_configs(const plan::Plan& plan,
                                                     std::vector<mig::MigPartedConfig> base,
                                                     const std::string& base_name) {
    std::vector<mig::MigPartedConfig> out = std::move(base);
    for (const mig::MigPartedConfig& ours : mig::parse_mig_parted(mig_parted_document(plan))) {
        const auto same = std::find_if(out.begin(), out.end(), [&](const mig::MigPartedConfig& c) {
            return c.name == ours.name;
        });
        if (same == out.end()) {
            out.push_back(ours);
            continue;
        }
        const bool nvidia_off = same->entries.size() == 1 && !same->entries[0].mig_enabled &&
                                !same->entries[0].devices &&
                                same->entries[0].device_filter.empty();
        if (ours.name == kMigDisabled && nvidia_off)
            continue;  // NVIDIA's all-disabled is the plan's whole GPU
        throw input_error(base_name + ": it already has a config named '" +
                          user_text::shown(ours.name) +
                          "', which the plan writes too; rename or remove it there");
    }
    return out;
}

BaseConfig read_base_config(const std::string& text, const std::string& path) {
    const std::string where = "--k8s-base-config '" + user_text::shown(path) + "'";
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw input_error(where + ": malformed YAML at line " + std::to_string(e.mark.line + 1) +
                          ": " + e.msg);
    }
    BaseConfig base;
    if (root.IsMap() && root["mig-configs"]) {
        base.configs = mig::parse_mig_parted(text);
        return base;
    }
    const auto scalar = [&](const YAML::Node& n, const std::string& path) {
        if (!n)
            throw strict::missing_field(where + ": " + path, "a ConfigMap, or a mig-parted file");
        if (!n.IsScalar())
            throw strict::wrong_type(where + ": " + path, "a scalar", yaml_type(n));
        return n.Scalar();
    };
    if (!root.IsMap() || !root["kind"] || scalar(root["kind"], "kind") != "ConfigMap")
        throw input_error(where + ": neither a ConfigMap nor a mig-parted config (version, "
                                  "mig-configs)");
    const YAML::Node meta = root["metadata"];
    if (!meta)
        throw strict::missing_field(where + ": metadata");
    if (!meta.IsMap())
        throw strict::wrong_type(where + ": metadata", "a mapping", yaml_type(meta));
    base.configmap = scalar(meta["name"], "metadata.name");
    if (dns_label(base.configmap) != base.configmap)
        throw input_error(where + ": metadata.name '" + user_text::shown(base.configmap) +
                          "' is not a ConfigMap name this writer keeps (lower-case letters, "
                          "digits and '-')");
    if (meta["namespace"]) {
        base.configmap_namespace = scalar(meta["namespace"], "metadata.namespace");
        if (dns_label(base.configmap_namespace) != base.configmap_namespace)
            throw input_error(where + ": metadata.namespace '" +
                              user_text::shown(base.configmap_namespace) +
                              "' is not a namespace name");
    }
    const YAML::Node data = root["data"];
    if (!data || !data.IsMap() || data.size() == 0)
        throw input_error(where + ": the ConfigMap has no data");
    if (!data["config.yaml"]) {
        if (data.size() != 1)
            throw input_error(where + ": the ConfigMap has no config.yaml and more than one key; "
                                      "give the mig-parted file itself");
        base.data_key = data.begin()->first.Scalar();
        if (base.data_key.empty() ||
            base.data_key.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789-._") != std::string::npos)
            throw input_error(where + ": the ConfigMap's data key is not a ConfigMap key");
    }
    const std::string document =
        scalar(data[base.data_key], strict::field_path("data", base.data_key));
    try {
        base.configs = mig::parse_mig_parted(document);
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::kInput)
            throw;
        throw input_error(where + ", data." + base.data_key + ": " + e.what());
    }
    return base;
}

std::string dns_label(std::string_view text) {
    std::string out = cut(text::slug(text), kMaxLabel);
    return out.empty() ? "x" : out;
}

std::string layout_config_name(const plan::GpuPlan& gpu) {
    if (!gpu.layout)
        return kMigDisabled;
    std::string name = "migscope";
    for (const auto& [profile, count] : profile_counts(*gpu.layout))
        name += "-" + std::to_string(count) + "x" + profile;
    std::string safe = mig::label_safe_name(name);
    if (name.size() > kMaxLabel || safe != name)
        safe = cut(safe, kMaxLabel - 9) + "-" + short_hash(name);
    return safe;
}

std::vector<DeployJob> deploy_jobs(const plan::Problem& problem, const plan::Candidate& c,
                                   const std::vector<protocol::JobSpec>& specs) {
    if (!specs.empty()) {
        bool match = specs.size() == problem.jobs.size();
        for (size_t j = 0; match && j < specs.size(); ++j)
            match = specs[j].name == problem.jobs[j].request.name;
        if (!match)
            throw input_error("deployment files: the job specs are not the planned jobs");
    }
    std::vector<DeployJob> out;
    for (size_t g = 0; g < c.plan.size(); ++g) {
        const plan::GpuPlan& gpu = c.plan[g];
        const std::string config = layout_config_name(gpu);
        for (size_t p = 0; p < gpu.queues.size(); ++p) {
            const std::vector<size_t>& queue = gpu.queues[p];
            for (size_t q = 0; q < queue.size(); ++q) {
                const plan::JobModel& m = problem.jobs.at(queue[q]);
                const plan::JobRequest& r = m.request;
                DeployJob d;
                d.job = queue[q];
                d.original_name = r.name;
                d.gpu = g;
                d.partition = p;
                d.profile = gpu.layout ? gpu.layout->instances.at(p).profile : "";
                d.config = config;
                d.position = q + 1;
                d.queue_length = queue.size();
                d.after = q > 0 ? out.back().name : "";
                // The order number keeps names unique and says where the job runs in the plan.
                const std::string number =
                    (out.size() + 1 < 10 ? "0" : "") + std::to_string(out.size() + 1);
                d.name = cut("migscope-" + number + "-" + text::slug(r.name), kMaxLabel);
                if (!r.command.empty()) {
                    d.argv = r.command;
                } else {
                    const int64_t batch = r.batch ? *r.batch : (m.profile ? m.profile->batch : 0);
                    d.argv = {"migscope", "train", "--model", r.workload, "--mode", r.mode};
                    if (batch > 0)
                        d.argv.insert(d.argv.end(), {"--batch", std::to_string(batch)});
                    if (!specs.empty()) {
                        const protocol::JobSpec& spec = specs[queue[q]];
                        if (!spec.data.empty())
                            d.argv.insert(d.argv.end(), {"--data", spec.data});
                        if (!spec.checkpoint.empty())
                            d.argv.insert(d.argv.end(), {"--checkpoint", spec.checkpoint});
                        if (spec.lora_rank)
                            d.argv.insert(d.argv.end(),
                                          {"--lora-rank", std::to_string(*spec.lora_rank)});
                    }
                    if (r.work_steps) {
                        d.argv.insert(d.argv.end(), {"--steps", std::to_string(*r.work_steps)});
                    } else {
                        const plan::JobPrediction& jp = c.prediction.jobs.at(queue[q]);
                        d.argv.insert(
                            d.argv.end(),
                            {"--seconds",
                             format_count(std::ceil(std::max(1.0, jp.end_s - jp.start_s)))});
                    }
                }
                out.push_back(std::move(d));
            }
        }
    }
    return out;
}

std::string plan_kubernetes(const plan::Problem& problem, const plan::Candidate& c,
                            const KubernetesOptions& o,
                            const std::vector<protocol::JobSpec>& specs) {
    if (o.image.empty())
        throw input_error(
            "--format k8s: give --image IMAGE, the container image every Job runs (with "
            "migscope for built-in jobs, your program for your own commands)");
    if (dns_label(o.job_namespace) != o.job_namespace)
        throw input_error("--namespace: '" + o.job_namespace +
                          "' is not a Kubernetes namespace name (lower-case letters, digits and "
                          "'-', at most 63, alphanumeric at both ends)");
    const std::vector<DeployJob> jobs = deploy_jobs(problem, c, specs);
    // The ConfigMap: NVIDIA's defaults and the plan's configs, or the plan's merged into the
    // user's own ConfigMap (its name and namespace kept, so that applying it updates theirs).
    std::string configmap = o.configmap;
    std::string configmap_namespace = o.operator_namespace;
    std::string data_key = "config.yaml";
    std::vector<mig::MigPartedConfig> configs;
    if (o.base_config_path.empty()) {
        configs = merged_mig_configs(c.plan, mig::default_mig_configs(), "NVIDIA's defaults");
    } else {
        BaseConfig base = read_base_config(o.base_config_text, o.base_config_path);
        if (!base.configmap.empty())
            configmap = base.configmap;
        if (!base.configmap_namespace.empty())
            configmap_namespace = base.configmap_namespace;
        data_key = base.data_key;
        configs = merged_mig_configs(c.plan, std::move(base.configs),
                                     "--k8s-base-config '" + user_text::shown(o.base_config_path) +
                                         "'");
    }
    std::ostringstream doc;
    doc << "# migscope plan for the NVIDIA GPU Operator (mig.strategy=mixed): " << c.name << "\n"
        << "# 1. Point the operator's mig-manager at the ConfigMap below (ClusterPolicy\n"
        << "#    spec.migManager.config.name=" << configmap << "). Beside the plan's configs\n"
        << "#    it holds "
        << (o.base_config_path.empty() ? "NVIDIA's default ones (all-balanced, all-1g.10gb, ...)"
                                       : "those of --k8s-base-config")
        << ".\n"
        << "# 2. Label each node with its layout; mig-manager applies it on every GPU of the "
           "node:\n";
    for (const auto& [name, gpus] : configs_of(c.plan)) {
        doc << "#    kubectl label node NODE nvidia.com/mig.config=" << name
            << " --overwrite   # planned GPU" << (gpus.size() > 1 ? "s " : " ") << gpu_list(gpus)
            << "\n";
    }
    doc << "# 3. kubectl apply -f this file. Jobs marked suspend wait for the job before them on\n"
        << "#    their partition (annotation migscope/after): Kubernetes does not order Jobs;\n"
        << "#    unsuspend each when its predecessor is done (docs/deploy.md).\n";

    YAML::Emitter cm;
    cm << YAML::BeginMap;
    cm << YAML::Key << "apiVersion" << YAML::Value << "v1";
    cm << YAML::Key << "kind" << YAML::Value << "ConfigMap";
    cm << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
    cm << YAML::Key << "name" << YAML::Value << configmap;
    cm << YAML::Key << "namespace" << YAML::Value << configmap_namespace;
    cm << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
    cm << YAML::Key << "app.kubernetes.io/managed-by" << YAML::Value << "migscope";
    cm << YAML::EndMap << YAML::EndMap;
    cm << YAML::Key << "data" << YAML::Value << YAML::BeginMap;
    cm << YAML::Key << data_key << YAML::Value << YAML::Literal << mig::write_mig_parted(configs);
    cm << YAML::EndMap << YAML::EndMap;
    doc << "---\n" << cm.c_str() << "\n";

    for (const DeployJob& job : jobs) {
        YAML::Emitter out;
        out << YAML::Comment(
            "job " + std::to_string(&job - jobs.data() + 1) + " of " + std::to_string(jobs.size()) +
            ": GPU " + std::to_string(job.gpu) + ", partition " + std::to_string(job.partition) +
            " (" + (job.profile.empty() ? std::string("whole GPU") : job.profile) +
            "), queue position " + std::to_string(job.position) + " of " +
            std::to_string(job.queue_length) + (job.after.empty() ? "" : ", after " + job.after));
        emit_job(out, job, o);
        doc << "---\n" << out.c_str() << "\n";
    }
    return doc.str();
}

}  // namespace migscope::report
