// Tests of the exporter's HTTP server in one process: answers over TCP and over a socket pair,
// keep-alive, HEAD, bodies refused unread, request deadlines for idle and slow clients, a head
// over the memory limit, the connection limit, and stop() with clients that never finish.
#include "exporter/server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "exporter/exposition.h"

using namespace migscope::exporter;
using Clock = std::chrono::steady_clock;

namespace {

const std::string kMetrics = "# TYPE migscope_gpu_up gauge\nmigscope_gpu_up{gpu=\"0\"} 1\n";

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

int connect_to(int port) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<uint16_t>(port));
    if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0)
        throw std::runtime_error("connect failed");
    return fd;
}

void send_all(int fd, const std::string& text) {
    size_t sent = 0;
    while (sent < text.size()) {
        const ssize_t n = send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
        if (n <= 0)
            return;
        sent += static_cast<size_t>(n);
    }
}

// Reads until the peer closes, `stop_after` bytes arrived, or `timeout_s` passed.
std::string receive(int fd, double timeout_s, size_t stop_after = SIZE_MAX) {
    std::string data;
    const Clock::time_point start = Clock::now();
    while (data.size() < stop_after) {
        const int left_ms = static_cast<int>(1000 * (timeout_s - seconds_since(start)));
        if (left_ms <= 0)
            break;
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, left_ms) <= 0)
            break;
        char buffer[65536];
        const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
        if (n <= 0)
            break;
        data.append(buffer, static_cast<size_t>(n));
    }
    return data;
}

// Seconds until the peer closed the connection (EOF or reset), or -1 after `timeout_s`.
double closed_after(int fd, double timeout_s) {
    const Clock::time_point start = Clock::now();
    while (seconds_since(start) < timeout_s) {
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, 20) > 0) {
            char buffer[4096];
            const ssize_t n = recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
            if (n <= 0)
                return seconds_since(start);
        }
    }
    return -1;
}

// One request on a new connection: its answer, read to its Content-Length or to the close.
std::string get(int port, const std::string& request) {
    const int fd = connect_to(port);
    send_all(fd, request);
    std::string answer;
    const Clock::time_point start = Clock::now();
    while (seconds_since(start) < 2.0) {
        const std::string more = receive(fd, 2.0 - seconds_since(start), 1);
        if (more.empty())
            break;
        answer += more;
        const size_t head_end = answer.find("\r\n\r\n");
        const size_t length_at = answer.find("Content-Length: ");
        if (head_end != std::string::npos && length_at != std::string::npos &&
            answer.size() >= head_end + 4 + std::stoul(answer.substr(length_at + 16)))
            break;
    }
    close(fd);
    return answer;
}

const std::string kGetMetrics = "GET /metrics HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n";

struct Served {
    MetricsServer server;
    int port;
    explicit Served(ServerLimits limits = {})
        : server([] { return kMetrics; }, limits), port(server.bind({"127.0.0.1", 0})) {
        server.start();
    }
};

ServerLimits short_timeout() {
    ServerLimits limits;
    limits.request_timeout_s = 0.4;
    return limits;
}

void wait_for_no_connections(const MetricsServer& server) {
    for (int i = 0; i < 200 && server.open_connections() != 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

}  // namespace

TEST(MetricsServer, AnswersMetricsWithTheExpositionContentType) {
    Served s;
    const std::string answer = get(s.port, kGetMetrics);
    EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
    EXPECT_NE(answer.find(std::string("Content-Type: ") + kExpositionContentType),
              std::string::npos)
        << answer;
    EXPECT_EQ(answer.substr(answer.find("\r\n\r\n") + 4), kMetrics);
    EXPECT_EQ(get(s.port, "GET /nothing HTTP/1.1\r\nHost: t\r\n\r\n").rfind("HTTP/1.1 404", 0), 0u);
    EXPECT_EQ(get(s.port, "DELETE /metrics HTTP/1.1\r\nHost: t\r\n\r\n").rfind("HTTP/1.1 405", 0),
              0u);
    EXPECT_NE(get(s.port, "DELETE /metrics HTTP/1.1\r\nHost: t\r\n\r\n").find("Allow: GET, HEAD"),
              std::string::npos);
    // HTTP/1.0 (no Host needed) is answered in HTTP/1.1, as RFC 9110 allows.
    EXPECT_EQ(get(s.port, "GET /metrics?x=1 HTTP/1.0\r\n\r\n").rfind("HTTP/1.1 200", 0), 0u);
}

TEST(MetricsServer, HeadAnswersWithoutABody) {
    Served s;
    const std::string answer =
        get(s.port, "HEAD /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
    EXPECT_EQ(answer.substr(answer.find("\r\n\r\n") + 4), "");
}

TEST(MetricsServer, KeepsAConnectionAliveForSeveralRequests) {
    Served s;
    const int fd = connect_to(s.port);
    for (int i = 0; i < 3; ++i) {
        // The third with a small body, which is read and dropped.
        send_all(fd, i < 2 ? "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n"
                           : "GET /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello");
        const std::string answer = receive(fd, 2.0, 1);
        EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << i << ": " << answer;
        receive(fd, 0.1);  // the rest of the answer
    }
    close(fd);
}

TEST(MetricsServer, RefusesALargeBodyWith413BeforeItIsSentAndCloses) {
    Served s;
    const int fd = connect_to(s.port);
    send_all(fd, "POST /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 100000000\r\n\r\n");
    const std::string answer = receive(fd, 2.0);  // to the close: no body byte was sent
    EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << answer;
    EXPECT_GE(closed_after(fd, 1.0), 0);
    close(fd);
    const int chunked = connect_to(s.port);
    send_all(chunked, "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n");
    EXPECT_EQ(receive(chunked, 2.0).rfind("HTTP/1.1 413", 0), 0u);
    close(chunked);
    // Expect: 100-continue gets its 413 at once, never a 100.
    EXPECT_EQ(get(s.port,
                  "PUT /metrics HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\n"
                  "Content-Length: 5000000\r\n\r\n")
                  .rfind("HTTP/1.1 413", 0),
              0u);
}

TEST(MetricsServer, ClosesIdleConnectionsAtTheRequestTimeout) {
    Served s(short_timeout());
    const int idle = connect_to(s.port);
    const double idle_s = closed_after(idle, 3.0);
    EXPECT_GE(idle_s, 0.3);
    EXPECT_LE(idle_s, 1.0);
    close(idle);
    // After an answer the next request gets the same time: a kept-alive connection left idle.
    const int kept = connect_to(s.port);
    send_all(kept, "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n");
    EXPECT_EQ(receive(kept, 1.0, 1).rfind("HTTP/1.1 200", 0), 0u);
    const double kept_s = closed_after(kept, 3.0);
    EXPECT_GE(kept_s, 0.3);
    EXPECT_LE(kept_s, 1.0);
    close(kept);
    wait_for_no_connections(s.server);
    EXPECT_EQ(s.server.open_connections(), 0u);
}

TEST(MetricsServer, ASlowRequestHeadIsCutAtTheDeadlineWhileOthersAreAnswered) {
    Served s(short_timeout());
    const int slow = connect_to(s.port);
    send_all(slow, "GET /metrics HTTP/1.1\r\n");
    const Clock::time_point start = Clock::now();
    double cut_s = -1;
    while (seconds_since(start) < 3.0) {
        if (send(slow, "X", 1, MSG_NOSIGNAL) != 1 || closed_after(slow, 0.05) >= 0) {
            cut_s = seconds_since(start);
            break;
        }
        EXPECT_EQ(get(s.port, kGetMetrics).rfind("HTTP/1.1 200", 0), 0u);
    }
    EXPECT_GE(cut_s, 0.3);
    EXPECT_LE(cut_s, 1.0);
    close(slow);
}

// Found by fuzz/exporter_http_fuzz.cpp: in libmicrohttpd's epoll mode the end of a stream that
// came with its last bytes went unseen, so a client that sent part of a head and shut its side
// held the connection until the deadline. The server polls (level-triggered) and sees it at once.
TEST(MetricsServer, AClientThatShutsItsSideMidHeadIsClosedAtOnce) {
    Served s;  // the 5 s deadline
    const int fd = connect_to(s.port);
    send_all(fd, "GET `ttp://a:9401-@etrTHyyyPOST /metrics HT\377TPy/");
    shutdown(fd, SHUT_WR);
    const double closed_s = closed_after(fd, 3.0);
    EXPECT_GE(closed_s, 0);
    EXPECT_LE(closed_s, 0.5);
    close(fd);
}

TEST(MetricsServer, ARequestHeadOverTheConnectionMemoryIsRefused) {
    Served s;
    const std::string answer =
        get(s.port,
            "GET /metrics HTTP/1.1\r\nHost: t\r\nX-Big: " + std::string(40000, 'a') + "\r\n\r\n");
    EXPECT_TRUE(answer.rfind("HTTP/1.1 431", 0) == 0 || answer.rfind("HTTP/1.1 413", 0) == 0 ||
                answer.empty())
        << answer.substr(0, 200);
    EXPECT_EQ(get(s.port, kGetMetrics).rfind("HTTP/1.1 200", 0), 0u);
}

TEST(MetricsServer, ConnectionsOverTheLimitWaitForAFreeSlot) {
    ServerLimits limits = short_timeout();
    limits.max_connections = 4;
    Served s(limits);
    std::vector<int> idle;
    for (int i = 0; i < 4; ++i)
        idle.push_back(connect_to(s.port));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(s.server.open_connections(), 4u);
    // A fifth waits in the kernel's queue until the idle ones are cut at their deadline.
    const Clock::time_point start = Clock::now();
    EXPECT_EQ(get(s.port, kGetMetrics).rfind("HTTP/1.1 200", 0), 0u);
    EXPECT_LE(seconds_since(start), 1.5);
    for (int fd : idle)
        close(fd);
}

TEST(MetricsServer, StopClosesEveryConnectionAtOnce) {
    auto s = std::make_unique<Served>();
    std::vector<int> clients;
    for (int i = 0; i < 20; ++i)
        clients.push_back(connect_to(s->port));
    for (int i = 0; i < 10; ++i)
        send_all(clients[i], "GET /metrics HTTP/1.1\r\nHost: t\r\nX-Slow: ");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const Clock::time_point start = Clock::now();
    s->server.stop();
    EXPECT_LE(seconds_since(start), 0.5);
    EXPECT_EQ(s->server.open_connections(), 0u);
    for (int fd : clients) {
        EXPECT_GE(closed_after(fd, 0.5), 0);
        close(fd);
    }
    s.reset();  // stop() again, from the destructor
}

TEST(MetricsServer, ServesASocketPairInProcess) {
    MetricsServer server([] { return kMetrics; });
    server.start();
    int pair[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    server.add_connection(pair[1]);
    send_all(pair[0], kGetMetrics);
    const std::string answer = receive(pair[0], 2.0);
    EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
    EXPECT_EQ(answer.substr(answer.find("\r\n\r\n") + 4), kMetrics);
    close(pair[0]);
    wait_for_no_connections(server);
    EXPECT_EQ(server.open_connections(), 0u);
}

TEST(MetricsServer, AMetricsCallbackThatThrowsIsA500NamingIt) {
    MetricsServer server([]() -> std::string { throw std::runtime_error("sample lost"); });
    const int port = server.bind({"127.0.0.1", 0});
    server.start();
    const std::string answer = get(port, kGetMetrics);
    EXPECT_EQ(answer.rfind("HTTP/1.1 500", 0), 0u) << answer;
    EXPECT_NE(answer.find("sample lost"), std::string::npos);
}
