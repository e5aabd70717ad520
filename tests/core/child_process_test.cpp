// Child processes: lines in and out, exit statuses, signals, exec failures, environment, fd 3.
#include "core/child_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "core/error.h"

namespace migscope {
namespace {

std::vector<std::string> read_all(ChildProcess& p) {
    std::vector<std::string> lines;
    while (p.read_stdout_lines(lines))
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return lines;
}

TEST(ChildProcess, EchoesStdinLinesAndReportsTheExitCode) {
    ChildOptions o;
    o.argv = {"/bin/sh", "-c", "read a; read b; echo \"$b\"; echo \"$a\"; exit 7"};
    ChildProcess p = ChildProcess::start(o);
    EXPECT_TRUE(p.write_line("first"));
    EXPECT_TRUE(p.write_line("second"));
    EXPECT_EQ(read_all(p), (std::vector<std::string>{"second", "first"}));
    const ExitStatus s = p.wait();
    EXPECT_EQ(s.code, 7);
    EXPECT_EQ(s.describe(), "exit 7");
}

TEST(ChildProcess, DeliversAnUnterminatedLastLine) {
    ChildOptions o;
    o.argv = {"printf", "a\\nb"};
    ChildProcess p = ChildProcess::start(o);
    EXPECT_EQ(read_all(p), (std::vector<std::string>{"a", "b"}));
}

TEST(ChildProcess, AMissingProgramIsAnInputErrorNamingIt) {
    ChildOptions o;
    o.argv = {"/no/such/program"};
    try {
        ChildProcess::start(o);
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        EXPECT_NE(std::string(e.what()).find("/no/such/program"), std::string::npos);
    }
}

TEST(ChildProcess, TerminateStopsTheWholeGroupAndSaysHow) {
    ChildOptions o;
    o.argv = {"/bin/sh", "-c", "sleep 30 & sleep 30; wait"};
    ChildProcess p = ChildProcess::start(o);
    const auto t0 = std::chrono::steady_clock::now();
    const ExitStatus s = p.terminate(2.0);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
    EXPECT_EQ(s.signal, SIGTERM);
    EXPECT_NE(s.describe().find("signal 15"), std::string::npos);
}

TEST(ChildProcess, WritingToAChildThatStoppedReadingFailsQuietly) {
    ChildOptions o;
    o.argv = {"true"};
    ChildProcess p = ChildProcess::start(o);
    p.wait();
    bool ok = true;
    for (int i = 0; i < 100 && ok; ++i)
        ok = p.write_line(std::string(4096, 'x'));
    EXPECT_FALSE(ok);  // EPIPE, and no SIGPIPE killed this test
}

TEST(ChildProcess, PassesEnvironmentAffinityAndAProgressPipe) {
    ChildOptions o;
    o.argv = {"/bin/sh", "-c",
              "echo \"$MIGSCOPE_TEST_VALUE\"; echo progress >&3; "
              "grep Cpus_allowed_list /proc/self/status"};
    o.env = {{"MIGSCOPE_TEST_VALUE", "42"}};
    o.cpu_cores = {0};
    o.progress = ProgressPipe::kFd3;
    ChildProcess p = ChildProcess::start(o);
    const auto lines = read_all(p);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0], "42");
    EXPECT_NE(lines[1].find("\t0"), std::string::npos) << lines[1];
    std::vector<std::string> progress;
    while (p.read_progress_lines(progress))
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    EXPECT_EQ(progress, std::vector<std::string>{"progress"});
    EXPECT_EQ(p.wait().code, 0);
}

// A job of a migscope killed by SIGKILL (no handler runs) dies with it instead of running on:
// this test stands in for migscope in a child process that starts `sleep 1000` and is killed;
// as the subreaper, the test then reaps the orphaned sleep, which must have been killed.
TEST(ChildProcess, AChildDiesWhenItsParentIsKilled) {
    ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    int pid_pipe[2];
    ASSERT_EQ(pipe(pid_pipe), 0);
    const pid_t parent = fork();
    ASSERT_GE(parent, 0);
    if (parent == 0) {
        ChildOptions o;
        o.argv = {"sleep", "1000"};
        ChildProcess job = ChildProcess::start(o);
        const pid_t job_pid = job.pid();
        (void)!write(pid_pipe[1], &job_pid, sizeof job_pid);
        pause();  // until killed
        _exit(0);
    }
    close(pid_pipe[1]);
    pid_t job_pid = 0;
    ASSERT_EQ(read(pid_pipe[0], &job_pid, sizeof job_pid), static_cast<ssize_t>(sizeof job_pid));
    close(pid_pipe[0]);
    ASSERT_EQ(kill(parent, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(parent, &status, 0), parent);
    // The orphaned job is now the test's child; it ends at once when it got SIGKILL, else it
    // would sleep on and is killed here after a generous wait.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    pid_t reaped = 0;
    while ((reaped = waitpid(job_pid, &status, WNOHANG)) == 0 &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (reaped == 0) {
        kill(job_pid, SIGKILL);
        waitpid(job_pid, &status, 0);
        FAIL() << "the job kept running after its parent was killed";
    }
    ASSERT_EQ(reaped, job_pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
    prctl(PR_SET_CHILD_SUBREAPER, 0);
}

}  // namespace
}  // namespace migscope
