// The exporter's end of the per-process activity signal: a local datagram socket that processes
// running the activity probe (libmigscope-activity.so) send their kernel busy time to. The kernel
// names each sender (SO_PASSCRED), so a report counts for the process that sent it, under the pid
// the exporter sees, whatever its own pid namespace. Bounded memory: the latest report per
// process and GPU, at most kMaxEntries of them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "activity/report.h"

namespace migscope::exporter {

// The latest report of each process and GPU, as the consumer reader asks for it.
class ActivityReports {
  public:
    virtual ~ActivityReports() = default;
    // The latest report of process `pid` for the GPU `gpu_uuid`, if one came.
    virtual std::optional<activity::ActivityReport> latest(unsigned pid,
                                                           const std::string& gpu_uuid) const = 0;
    // The processes whose latest report for `gpu_uuid` was sent after `since_ns`
    // (CLOCK_MONOTONIC), in pid order: with those NVML no longer lists, the ones that exited since.
    virtual std::vector<unsigned> reported_since(const std::string& gpu_uuid,
                                                 uint64_t since_ns) const = 0;
};

class ActivityListener : public ActivityReports {
  public:
    static constexpr size_t kMaxEntries = 4096;
    // Binds `path` (a socket file left there by an earlier exporter is replaced; any other file
    // is an error), makes it writable by every user (the sender is named by the kernel, so no one
    // can report for another process) and starts receiving. An unavailable error (exit code 3)
    // names the path when it cannot be bound.
    explicit ActivityListener(std::string path);
    ~ActivityListener() override;  // stops, closes and removes the socket file
    ActivityListener(const ActivityListener&) = delete;
    ActivityListener& operator=(const ActivityListener&) = delete;

    std::optional<activity::ActivityReport> latest(unsigned pid,
                                                   const std::string& gpu_uuid) const override;
    std::vector<unsigned> reported_since(const std::string& gpu_uuid,
                                         uint64_t since_ns) const override;
    size_t entries() const;
    // Datagrams that were not reports, a full table: each kind once.
    std::vector<std::string> take_warnings();
    const std::string& path() const { return path_; }

  private:
    void receive_loop();
    void keep(unsigned pid, activity::ActivityReport report);
    void warn_once(const std::string& kind, const std::string& text);

    std::string path_;
    int fd_ = -1;
    std::atomic<bool> stop_{false};
    mutable std::mutex mutex_;  // guards everything below
    struct Entry {
        activity::ActivityReport report;
        std::chrono::steady_clock::time_point received;
    };
    std::map<std::pair<unsigned, std::string>, Entry> latest_;
    std::vector<std::string> warnings_;
    std::set<std::string> warned_kinds_;
    std::thread thread_;  // last: starts after everything it reads
};

}  // namespace migscope::exporter
