// Tests of the exporter's activity socket: a report counts for the process the kernel names as
// its sender (this test, a child), other datagrams are refused once, a file that is not a socket
// is left alone, and the socket file goes with the listener.
#include "exporter/activity_listener.h"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/error.h"

using namespace migscope;
using namespace migscope::exporter;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    fs::path path = fs::temp_directory_path() / ("migscope-activity-" + std::to_string(::getpid()));
    TempDir() { fs::create_directories(path); }
    ~TempDir() { fs::remove_all(path); }
};

void send_text(const std::string& socket_path, const std::string& text) {
    const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, socket_path.c_str(), sizeof(address.sun_path) - 1);
    (void)sendto(fd, text.data(), text.size(), 0, reinterpret_cast<const sockaddr*>(&address),
                 sizeof address);
    close(fd);
}

activity::ActivityReport report(const std::string& uuid, uint64_t busy_ns) {
    activity::ActivityReport r;
    r.gpu_uuid = uuid;
    r.busy_ns = busy_ns;
    r.sent_ns = 5;
    return r;
}

// Waits up to 2 s for `pid`'s report on `uuid`.
std::optional<activity::ActivityReport> wait_for(const ActivityListener& l, unsigned pid,
                                                 const std::string& uuid) {
    for (int i = 0; i < 200; ++i) {
        if (auto r = l.latest(pid, uuid))
            return r;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return std::nullopt;
}

}  // namespace

TEST(ActivityListener, AReportCountsForTheProcessThatSentIt) {
    TempDir dir;
    const std::string path = (dir.path / "activity.sock").string();
    ActivityListener listener(path);
    EXPECT_EQ(fs::status(path).permissions() & fs::perms::others_write, fs::perms::others_write);

    send_text(path, activity::encode(report("GPU-a", 111)));
    const auto own = wait_for(listener, static_cast<unsigned>(::getpid()), "GPU-a");
    ASSERT_TRUE(own);
    EXPECT_EQ(own->busy_ns, 111u);

    // A child's report is the child's, whatever it writes.
    const pid_t child = fork();
    if (child == 0) {
        send_text(path, activity::encode(report("GPU-a", 222)));
        _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    const auto theirs = wait_for(listener, static_cast<unsigned>(child), "GPU-a");
    ASSERT_TRUE(theirs);
    EXPECT_EQ(theirs->busy_ns, 222u);
    EXPECT_EQ(listener.latest(static_cast<unsigned>(::getpid()), "GPU-a")->busy_ns, 111u);
    EXPECT_FALSE(listener.latest(static_cast<unsigned>(::getpid()), "GPU-b"));
    EXPECT_EQ(listener.entries(), 2u);
    // Both were sent at 5 ns: after 4 ns both (the exited child too, in pid order), after 5 none.
    const unsigned self = static_cast<unsigned>(::getpid()), kid = static_cast<unsigned>(child);
    EXPECT_EQ(listener.reported_since("GPU-a", 4),
              (std::vector<unsigned>{std::min(self, kid), std::max(self, kid)}));
    EXPECT_TRUE(listener.reported_since("GPU-a", 5).empty());
    EXPECT_TRUE(listener.reported_since("GPU-b", 0).empty());
    EXPECT_TRUE(listener.take_warnings().empty());
}

TEST(ActivityListener, OtherDatagramsAreIgnoredAndSaidOnce) {
    TempDir dir;
    const std::string path = (dir.path / "a.sock").string();
    ActivityListener listener(path);
    send_text(path, "hello");
    send_text(path, "migscope-activity 1 gpu=GPU-a");
    send_text(path, activity::encode(report("GPU-z", 1)));  // received after the two above
    ASSERT_TRUE(wait_for(listener, static_cast<unsigned>(::getpid()), "GPU-z"));
    const std::vector<std::string> warnings = listener.take_warnings();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("is not an activity report"), std::string::npos) << warnings[0];
    EXPECT_EQ(listener.entries(), 1u);
}

TEST(ActivityListener, AFileThatIsNotASocketIsLeftAloneAndTheSocketGoesWithTheListener) {
    TempDir dir;
    const fs::path file = dir.path / "not-a-socket";
    std::ofstream(file) << "keep me";
    try {
        ActivityListener listener(file.string());
        FAIL() << "bound over a regular file";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnavailable);
        EXPECT_NE(std::string(e.what()).find("not a socket"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(fs::exists(file));

    const fs::path path = dir.path / "b.sock";
    { ActivityListener first(path.string()); }
    EXPECT_FALSE(fs::exists(path));
    // A socket file an earlier exporter left (killed) is replaced.
    {
        const int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
        ASSERT_EQ(bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
        close(fd);
    }
    ActivityListener second(path.string());
    EXPECT_THROW(ActivityListener(std::string(200, 'x')), Error);
}
