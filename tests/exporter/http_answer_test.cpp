// Tests of the exporter's HTTP routing: what each request head is answered, bodies refused first.
#include "exporter/http_answer.h"

#include <gtest/gtest.h>

#include "exporter/exposition.h"

using namespace migscope::exporter;

namespace {

std::string metrics() {
    return "migscope_gpu_up 1\n";
}

HttpAnswer answer(std::string_view method, std::string_view path,
                  std::optional<std::string_view> length = std::nullopt, bool chunked = false) {
    RequestHead head;
    head.method = method;
    head.path = path;
    head.content_length = length;
    head.has_transfer_encoding = chunked;
    return answer_request(head, metrics);
}

}  // namespace

TEST(HttpAnswer, MetricsInThePrometheusTextFormat) {
    const HttpAnswer a = answer("GET", "/metrics");
    EXPECT_EQ(a.status, 200u);
    EXPECT_EQ(a.content_type, kExpositionContentType);
    EXPECT_EQ(a.body, metrics());
    EXPECT_EQ(answer("HEAD", "/metrics").status, 200u);  // libmicrohttpd leaves out the body
}

TEST(HttpAnswer, RootNamesMetricsAndOtherPathsAreNotFound) {
    EXPECT_EQ(answer("GET", "/").status, 200u);
    EXPECT_NE(answer("GET", "/").body.find("/metrics"), std::string::npos);
    for (const char* path : {"/metrics/", "/Metrics", "/metricsx", "", "/../metrics"})
        EXPECT_EQ(answer("GET", path).status, 404u) << path;
}

TEST(HttpAnswer, OnlyGetAndHeadAreServed) {
    for (const char* method : {"POST", "PUT", "DELETE", "OPTIONS", "get", "TRACE", "X"}) {
        const HttpAnswer a = answer(method, "/metrics");
        EXPECT_EQ(a.status, 405u) << method;
        EXPECT_EQ(a.allow, "GET, HEAD");
    }
}

TEST(HttpAnswer, BodiesOverTheLimitOrOfUnknownLengthAre413WhateverTheRequest) {
    EXPECT_EQ(answer("GET", "/metrics", "0").status, 200u);
    EXPECT_EQ(answer("GET", "/metrics", std::to_string(kMaxRequestBodyBytes)).status, 200u);
    EXPECT_EQ(answer("GET", "/metrics", std::to_string(kMaxRequestBodyBytes + 1)).status, 413u);
    EXPECT_EQ(answer("POST", "/metrics", "100000000").status, 413u);
    EXPECT_EQ(answer("POST", "/nothing", "18446744073709551615").status, 413u);
    EXPECT_EQ(answer("POST", "/nothing", "99999999999999999999999").status, 413u);  // > 64 bits
    EXPECT_EQ(answer("GET", "/metrics", std::nullopt, true).status, 413u);
    EXPECT_EQ(answer("PUT", "/", " 12 ").status, 405u);  // small: the method decides
    for (const char* bad : {"", "-1", "+5", "1e3", "0x10", "12 13"})
        EXPECT_EQ(answer("GET", "/metrics", bad).status, 400u) << bad;
}
