// libmigscope-activity.so: a CUDA injection library (CUDA_INJECTION64_PATH) that records the
// process's kernels through CUPTI's activity API and sends the exporter, every period, each GPU's
// kernel busy time over a local datagram socket. The kernel names the sender to the exporter
// (SO_PASSCRED), so a process reports for itself only. It never stops the process: on any error
// it says so once on stderr and stays quiet. MIGSCOPE_ACTIVITY_DUTY below 1 samples: the records
// are on for that share of each period only, and the report says for how long (traced_ns).
#include <cupti.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "activity/busy_time.h"
#include "activity/injection.h"
#include "activity/report.h"
#include "activity/trace_windows.h"

namespace {

using migscope::activity::ActivityReport;
using migscope::activity::BusyTime;
using migscope::activity::TraceWindows;

constexpr size_t kBufferBytes = 1 << 20;  // per CUPTI buffer; CUPTI asks for more when busy
constexpr size_t kBufferAlign = 8;

struct Device {
    std::string uuid;  // from the device record; empty until it arrived
    BusyTime busy;
};

struct Probe {
    std::mutex mutex;  // guards devices and dropped (CUPTI's thread completes buffers)
    std::map<uint32_t, Device> devices;  // by CUPTI device id
    uint64_t dropped = 0;
    int socket_fd = -1;
    sockaddr_un address{};
    socklen_t address_len = 0;
    double period_s = 0.5;
    uint64_t started_ns = 0;
    std::optional<double> sm_share;
    std::string job;  // MIGSCOPE_JOB, when it is a valid job name
    // MIGSCOPE_ACTIVITY_GRAPHS=1: one record per CUDA graph launch (its execution's start and end)
    // instead of one per kernel of it, for jobs that replay their steps as graphs (migscope's
    // workers): far fewer records, so a smaller cost (docs/exporter.md, "What each kind costs").
    bool graphs = false;
    // MIGSCOPE_ACTIVITY_DUTY, 0.01-1: the share of each period the kernel records are on; below 1
    // the records are turned on and off every period, and kernels count only inside the windows.
    double duty = 1;
    std::vector<CUpti_ActivityKind> record_kinds;  // the kinds CUPTI accepted, turned on and off
    TraceWindows windows;                          // guarded by mutex; used when duty < 1
    std::string records;  // what the reports say it records (activity::probe_records)
    std::atomic<bool> stopping{false};
};

Probe& probe() {
    static Probe* p = new Probe;  // never destroyed: CUPTI may call back during exit
    return *p;
}

void say_once(const std::string& what) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
        std::fprintf(stderr, "migscope-activity: %s (this process sends no GPU activity)\n",
                     what.c_str());
}

std::string cupti_error(CUptiResult result) {
    const char* text = nullptr;
    cuptiGetResultString(result, &text);
    return text ? text : "CUPTI error " + std::to_string(static_cast<int>(result));
}

std::string uuid_text(const CUuuid& uuid) {
    const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
    char text[64];
    std::snprintf(text, sizeof text,
                  "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                  b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                  b[14], b[15]);
    return text;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *max_records = 0;  // as many as fit
}

// Under the probe's mutex: one kernel's or graph launch's interval, clipped to the windows the
// records were on in when the probe samples.
void add_interval(Probe& p, uint32_t device_id, uint64_t start, uint64_t end) {
    BusyTime& busy = p.devices[device_id].busy;
    if (p.duty >= 1) {
        busy.add(start, end);
        return;
    }
    for (const auto& [from, to] : p.windows.clip(start, end))
        busy.add(from, to);
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t,
                               size_t valid_size) {
    Probe& p = probe();
    {
        std::lock_guard<std::mutex> lock(p.mutex);
        CUpti_Activity* record = nullptr;
        while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
            if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
                const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
                add_interval(p, k->deviceId, k->start, k->end);
            } else if (record->kind == CUPTI_ACTIVITY_KIND_GRAPH_TRACE) {
                const auto* g = reinterpret_cast<const CUpti_ActivityGraphTrace2*>(record);
                // Both 0: CUPTI could not time this launch.
                if (g->start != 0 || g->end != 0)
                    add_interval(p, g->deviceId, g->start, g->end);
            } else if (record->kind == CUPTI_ACTIVITY_KIND_DEVICE) {
                const auto* d = reinterpret_cast<const CUpti_ActivityDevice5*>(record);
                p.devices[d->id].uuid = uuid_text(d->uuid);
            }
        }
        size_t dropped = 0;
        if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS)
            p.dropped += dropped;
    }
    std::free(buffer);
}

// Folds what CUPTI delivered and sends one report per GPU whose UUID is known.
void send_reports() {
    Probe& p = probe();
    std::lock_guard<std::mutex> lock(p.mutex);
    const uint64_t now_ns = migscope::activity::monotonic_ns();
    for (auto& [id, device] : p.devices) {
        device.busy.flush();
        if (device.uuid.empty())
            continue;
        ActivityReport report;
        report.gpu_uuid = device.uuid;
        report.busy_ns = device.busy.busy_ns();
        report.kernels = device.busy.kernels();
        report.dropped = p.dropped;
        report.started_ns = p.started_ns;
        report.sent_ns = now_ns;
        report.sm_share = p.sm_share;
        report.job = p.job;
        report.records = p.records;
        if (p.duty < 1)
            report.traced_ns = p.windows.traced_ns();
        const std::string line = migscope::activity::encode(report);
        // No exporter listening (ENOENT, ECONNREFUSED) or its queue full (EAGAIN): this report
        // is lost, the next carries the cumulative counters.
        (void)sendto(p.socket_fd, line.data(), line.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                     reinterpret_cast<const sockaddr*>(&p.address), p.address_len);
    }
}

// Turns the kernel records on or off; false (said once) when CUPTI refuses.
bool set_records(Probe& p, bool on) {
    for (CUpti_ActivityKind kind : p.record_kinds) {
        const CUptiResult result = on ? cuptiActivityEnable(kind) : cuptiActivityDisable(kind);
        if (result != CUPTI_SUCCESS) {
            say_once("CUPTI refused to turn kernel records " + std::string(on ? "on" : "off") +
                     ": " + cupti_error(result));
            return false;
        }
    }
    return true;
}

uint64_t cupti_now_ns() {
    uint64_t ns = 0;
    cuptiGetTimestamp(&ns);  // the records' clock
    return ns;
}

void report_loop() {
    Probe& p = probe();
    const auto period = std::chrono::duration<double>(p.period_s);
    while (!p.stopping.load()) {
        if (p.duty < 1) {
            if (!set_records(p, true))
                return;
            const uint64_t on_ns = cupti_now_ns();
            std::this_thread::sleep_for(period * p.duty);
            if (!set_records(p, false))
                return;
            const uint64_t off_ns = cupti_now_ns();
            {
                std::lock_guard<std::mutex> lock(p.mutex);
                p.windows.add(on_ns, off_ns);
            }
            std::this_thread::sleep_for(period * (1 - p.duty));
        } else {
            std::this_thread::sleep_for(period);
        }
        cuptiActivityFlushAll(0);
        send_reports();
    }
}

void at_exit() {
    Probe& p = probe();
    p.stopping.store(true);
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    send_reports();
}

bool configure(Probe& p) {
    const char* path = std::getenv("MIGSCOPE_ACTIVITY_SOCKET");
    const std::string socket_path = path && *path ? path : migscope::activity::kDefaultSocketPath;
    if (socket_path.size() >= sizeof(p.address.sun_path)) {
        say_once("MIGSCOPE_ACTIVITY_SOCKET is longer than a socket path may be");
        return false;
    }
    p.address.sun_family = AF_UNIX;
    std::memcpy(p.address.sun_path, socket_path.c_str(), socket_path.size() + 1);
    p.address_len =
        static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket_path.size() + 1);
    if (const char* period = std::getenv("MIGSCOPE_ACTIVITY_PERIOD_S")) {
        const double s = std::strtod(period, nullptr);
        if (s >= 0.05 && s <= 60)
            p.period_s = s;
    }
    if (const char* job = std::getenv("MIGSCOPE_JOB")) {
        if (migscope::activity::valid_job_name(job))
            p.job = job;
        else
            say_once("MIGSCOPE_JOB is not a job name (1-128 letters, digits, . _ : + -); the "
                     "reports name no job");
    }
    const char* graphs = std::getenv("MIGSCOPE_ACTIVITY_GRAPHS");
    const char* duty = std::getenv("MIGSCOPE_ACTIVITY_DUTY");
    p.records = migscope::activity::probe_records(graphs ? graphs : "", duty ? duty : "");
    p.graphs = p.records == "graphs";
    if (duty) {
        p.duty = std::strtod(duty, nullptr);
        if (!(p.duty >= 0.01 && p.duty <= 1)) {
            say_once("MIGSCOPE_ACTIVITY_DUTY must be 0.01-1");  // no reports rather than a guess
            return false;
        }
        // Turning graph records on and off crashed a worker (SIGSEGV in its first steps, H100,
        // CUPTI 13.0, 2026-12-05): graph records are never sampled (activity::probe_records).
        if (p.graphs && p.duty < 1) {
            std::fprintf(stderr,
                         "migscope-activity: graph records are not sampled; "
                         "MIGSCOPE_ACTIVITY_DUTY is ignored\n");
            p.duty = 1;
        }
    }
    if (const char* percent = std::getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE")) {
        const double share = std::strtod(percent, nullptr) / 100.0;
        if (share > 0 && share < 1)
            p.sm_share = share;
    }
    p.socket_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (p.socket_fd < 0) {
        say_once("cannot create a socket");
        return false;
    }
    return true;
}

}  // namespace

// Called by the CUDA driver once, when it initialises, for the library CUDA_INJECTION64_PATH
// names. Returns 1 (the driver ignores the value).
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
    Probe& p = probe();
    p.started_ns = migscope::activity::monotonic_ns();
    if (!configure(p))
        return 1;
    CUptiResult result = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (result == CUPTI_SUCCESS)
        result = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE);
    if (result == CUPTI_SUCCESS && p.graphs) {
        result = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
        p.record_kinds.push_back(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
    }
    // Concurrent: the plain kernel kind would serialise the process's kernels. With graph records
    // it counts the kernels launched outside graphs, where CUPTI allows both kinds.
    if (result == CUPTI_SUCCESS) {
        const CUptiResult kernels = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        if (kernels != CUPTI_SUCCESS && p.graphs)
            std::fprintf(stderr,
                         "migscope-activity: graph launches only (CUPTI refused kernel records "
                         "beside them: %s); kernels outside CUDA graphs are not counted\n",
                         cupti_error(kernels).c_str());
        else
            result = kernels;
        if (kernels == CUPTI_SUCCESS)
            p.record_kinds.push_back(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    }
    if (result != CUPTI_SUCCESS) {
        say_once("CUPTI refused kernel activity tracing: " + cupti_error(result));
        return 1;
    }
    // Sampling: off until the first window (the device records stay on for the UUIDs).
    if (p.duty < 1 && !set_records(p, false))
        return 1;
    std::atexit(at_exit);
    std::thread(report_loop).detach();
    return 1;
}
