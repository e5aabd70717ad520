// Fuzz target: the exporter's HTTP request handling in one process. Any bytes are sent to the
// /metrics server (libmicrohttpd with migscope's routing and deadlines, exporter/server.h) over a
// socket pair, then the client's side is shut. Every answer must be an HTTP/1.1 status line with
// a status the exporter documents (docs/limits.md), carry a Content-Length its body matches, and
// /metrics' 200 the metrics text exactly; the server must close the connection once the client
// has sent everything, and keep no connection open after. The routing alone
// (exporter::answer_request) is fuzzed on a method, path and Content-Length cut from the bytes.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <thread>

#include "exporter/exposition.h"
#include "exporter/http_answer.h"
#include "exporter/server.h"
#include "fuzz_check.h"

namespace {

using migscope::fuzz::fail;
using namespace migscope::exporter;
using Clock = std::chrono::steady_clock;

const std::string kMetrics =
    "# HELP migscope_gpu_up 1 when the last sample of the GPU succeeded.\n"
    "# TYPE migscope_gpu_up gauge\nmigscope_gpu_up{gpu=\"0\",UUID=\"GPU-fuzz\"} 1\n";
constexpr size_t kMaxAnswerBytes = 1 << 20;
constexpr double kCloseLimitS = 5.0;

MetricsServer& server() {
    static MetricsServer* served = [] {
        auto* s = new MetricsServer([] { return kMetrics; });  // kept for the process's life
        s->start();
        return s;
    }();
    return *served;
}

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// Sends `input` on a new connection, shuts the sending side, and reads to the server's close.
std::string exchange(std::string_view input) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
        fail("socketpair", "failed");
    server().add_connection(pair[1]);
    const int fd = pair[0];
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    std::string answer;
    size_t sent = 0;
    bool shut = false;
    const Clock::time_point start = Clock::now();
    while (true) {
        if (sent == input.size() && !shut) {
            shutdown(fd, SHUT_WR);
            shut = true;
        }
        const double left_s = kCloseLimitS - seconds_since(start);
        if (left_s <= 0)
            fail("the server kept a connection open after its client had sent everything",
                 std::to_string(answer.size()).c_str());
        pollfd p{fd, static_cast<short>(POLLIN | (shut ? 0 : POLLOUT)), 0};
        poll(&p, 1, static_cast<int>(left_s * 1000) + 1);
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            char buffer[65536];
            const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
                break;  // closed (a reset counts: the server closed with input unread)
            if (n > 0)
                answer.append(buffer, static_cast<size_t>(n));
            if (answer.size() > kMaxAnswerBytes)
                fail("more than 1 MB answered to one connection", "");
        }
        if (!shut && (p.revents & POLLOUT)) {
            const ssize_t n = send(fd, input.data() + sent, input.size() - sent, MSG_NOSIGNAL);
            if (n > 0)
                sent += static_cast<size_t>(n);
            else if (n < 0 && errno != EAGAIN && errno != EINTR)
                sent = input.size();  // the server closed: read what it answered
        }
    }
    close(fd);
    return answer;
}

// The header's value in an answer's head ("" when absent); names as libmicrohttpd writes them.
std::string header(std::string_view head, std::string_view name) {
    const size_t at = head.find("\r\n" + std::string(name) + ": ");
    if (at == std::string_view::npos)
        return "";
    const size_t begin = at + 4 + name.size();
    return std::string(head.substr(begin, head.find("\r\n", begin) - begin));
}

void check_answers(const std::string& answer) {
    // Ours: GET/HEAD /metrics and / (200), 404, 405, 413 (bodies), 400 (a Content-Length that is
    // no number). libmicrohttpd's own, after which it closes: 400 (a malformed request), 413 (a
    // Content-Length over 64 bits), 414 and 431 (a head over the connection's memory), 505.
    static const std::set<int> ours = {200, 400, 404, 405, 413};
    static const std::set<int> library = {400, 413, 414, 431, 505};
    size_t pos = 0;
    while (pos < answer.size()) {
        if (answer.compare(pos, 9, "HTTP/1.1 ") != 0 || answer.size() < pos + 13 ||
            answer[pos + 12] != ' ')
            fail("an answer that does not start with an HTTP/1.1 status line",
                 answer.substr(pos, 40).c_str());
        const int status = std::atoi(answer.substr(pos + 9, 3).c_str());
        const size_t head_end = answer.find("\r\n\r\n", pos);
        if (head_end == std::string::npos)
            fail("an answer cut inside its head", answer.substr(pos, 200).c_str());
        const std::string_view head(answer.data() + pos, head_end + 2 - pos);
        if (status == 100) {  // "100 Continue" to a request with Expect: 100-continue
            pos = head_end + 4;
            continue;
        }
        const std::string type = header(head, "Content-Type");
        const std::string length_text = header(head, "Content-Length");
        if (length_text.empty())
            fail("an answer without Content-Length", std::string(head).c_str());
        const size_t length = std::stoul(length_text);
        const size_t body = head_end + 4;
        if (type.empty()) {
            // libmicrohttpd's own error answer; 0.9.75 may write its head twice (docs/exporter.md),
            // and the connection ends with it.
            if (!library.count(status))
                fail("libmicrohttpd answered a status the exporter does not document",
                     std::string(head).c_str());
            return;
        }
        if (!ours.count(status))
            fail("an answer with a status the exporter does not document",
                 std::string(head).c_str());
        // A HEAD answer has no body: the stream ends, or the next answer starts.
        if (body == answer.size() || answer.compare(body, 9, "HTTP/1.1 ") == 0) {
            pos = body;
            continue;
        }
        if (answer.size() < body + length)
            fail("a body shorter than its Content-Length", std::string(head).c_str());
        if (status == 200 && type == kExpositionContentType &&
            answer.compare(body, length, kMetrics) != 0)
            fail("/metrics answered other than the metrics text", answer.substr(body).c_str());
        if (status == 405 && header(head, "Allow") != "GET, HEAD")
            fail("a 405 without Allow: GET, HEAD", std::string(head).c_str());
        pos = body + length;
    }
}

void wait_until_closed() {
    const Clock::time_point start = Clock::now();
    while (server().open_connections() != 0) {
        if (seconds_since(start) > 2.0)
            fail("a connection stayed open after its client closed", "");
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
}

// The routing alone: method, path and Content-Length as the first three lines of the bytes.
void check_routing(std::string_view data) {
    std::string_view parts[3];
    for (std::string_view& part : parts) {
        const size_t end = data.find('\n');
        part = data.substr(0, end);
        data = end == std::string_view::npos ? std::string_view() : data.substr(end + 1);
    }
    RequestHead head;
    head.method = parts[0];
    head.path = parts[1];
    if (!parts[2].empty())
        head.content_length = parts[2];
    head.has_transfer_encoding = !data.empty() && data.front() == 'T';
    const HttpAnswer a = answer_request(head, [] { return kMetrics; });
    if (a.status != 200 && a.status != 400 && a.status != 404 && a.status != 405 && a.status != 413)
        fail("answer_request gave a status it does not document", std::to_string(a.status).c_str());
    if (head.has_transfer_encoding && a.status != 413)
        fail("a body of unknown length not refused", std::to_string(a.status).c_str());
    if (a.status == 200 && head.path != "/metrics" && head.path != "/")
        fail("200 for a path the exporter does not serve", std::string(head.path).c_str());
    if (a.status == 200 && head.method != "GET" && head.method != "HEAD")
        fail("200 for a method other than GET and HEAD", std::string(head.method).c_str());
    if (a.content_type.empty())
        fail("an answer without a content type", std::to_string(a.status).c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    check_routing(input);
    check_answers(exchange(input));
    wait_until_closed();
    return 0;
}
