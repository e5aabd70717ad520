// Reading a pod UID and container id out of cgroup paths.
#include "exporter/kubernetes.h"

#include <algorithm>
#include <vector>

#include "exporter/cgroup.h"

namespace migscope::exporter {
namespace {

bool is_uid_text(std::string_view text) {
    if (text.size() != 36)
        return false;
    return std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-';
    });
}

bool is_container_id(std::string_view text) {
    return text.size() >= 12 && std::all_of(text.begin(), text.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

// "pod<UID>" (cgroupfs) or "kubepods-<qos>-pod<UID_with_underscores>.slice" (systemd).
std::optional<std::string> pod_uid_of(std::string_view segment) {
    const size_t at = segment.rfind("pod");  // "kubepods-" holds "pod" too
    if (at == std::string_view::npos)
        return std::nullopt;
    std::string_view rest = segment.substr(at + 3);
    if (rest.size() >= 6 && rest.substr(rest.size() - 6) == ".slice")
        rest.remove_suffix(6);
    std::string uid(rest);
    std::replace(uid.begin(), uid.end(), '_', '-');
    if (!is_uid_text(uid))
        return std::nullopt;
    return uid;
}

// "<ID>" (cgroupfs) or "<runtime>-<ID>.scope" (systemd: cri-containerd-, crio-, docker-).
std::optional<std::string> container_id_of(std::string_view segment) {
    if (segment.size() >= 6 && segment.substr(segment.size() - 6) == ".scope")
        segment.remove_suffix(6);
    const size_t dash = segment.rfind('-');
    if (dash != std::string_view::npos)
        segment = segment.substr(dash + 1);
    if (!is_container_id(segment))
        return std::nullopt;
    return std::string(segment);
}

}  // namespace

std::optional<PodIdentity> parse_pod_cgroup(std::string_view cgroup_text) {
    for (std::string_view path : cgroup_paths(cgroup_text)) {
        if (path.find("kubepods") == std::string_view::npos)
            continue;
        std::optional<PodIdentity> found;
        for (std::string_view segment : path_segments(path)) {
            if (!found) {
                if (auto uid = pod_uid_of(segment))
                    found = PodIdentity{*uid, ""};
            } else if (auto id = container_id_of(segment)) {
                found->container_id = *id;
                break;
            }
        }
        if (found)
            return found;
    }
    return std::nullopt;
}

}  // namespace migscope::exporter
