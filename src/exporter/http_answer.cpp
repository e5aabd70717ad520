// The exporter's HTTP routing: status, content type and body for a request head.
#include "exporter/http_answer.h"

#include <charconv>
#include <cstdint>

#include "exporter/exposition.h"

namespace migscope::exporter {
namespace {

constexpr const char* kPlainText = "text/plain; charset=utf-8";

HttpAnswer plain(unsigned status, std::string body) {
    HttpAnswer answer;
    answer.status = status;
    answer.content_type = kPlainText;
    answer.body = std::move(body);
    return answer;
}

// The Content-Length value as a number (digits only, no sign; more than 64 bits hold: the
// largest); nullopt when it is not one.
std::optional<uint64_t> parse_length(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
        text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t'))
        text.remove_suffix(1);
    uint64_t length = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), length);
    if (text.empty() || end != text.data() + text.size() ||
        (error != std::errc() && error != std::errc::result_out_of_range))
        return std::nullopt;
    return error == std::errc() ? length : UINT64_MAX;
}

}  // namespace

HttpAnswer answer_request(const RequestHead& head, const std::function<std::string()>& metrics_text,
                          size_t max_body_bytes) {
    if (head.has_transfer_encoding)
        return plain(413, "request bodies of unknown length (Transfer-Encoding) are refused\n");
    if (head.content_length) {
        const std::optional<uint64_t> length = parse_length(*head.content_length);
        if (!length)
            return plain(400, "Content-Length is not a number\n");
        if (*length > max_body_bytes)
            return plain(413, "request bodies over " + std::to_string(max_body_bytes) +
                                  " bytes are refused\n");
    }
    if (head.method != "GET" && head.method != "HEAD") {
        HttpAnswer answer = plain(405, "only GET and HEAD are served\n");
        answer.allow = "GET, HEAD";
        return answer;
    }
    if (head.path == "/metrics") {
        HttpAnswer answer;
        answer.content_type = kExpositionContentType;
        answer.body = metrics_text();
        return answer;
    }
    if (head.path == "/")
        return plain(200, "migscope exporter: metrics at /metrics\n");
    return plain(404, "not found: the exporter serves /metrics\n");
}

}  // namespace migscope::exporter
