// Fetching an exporter's metrics text over HTTP (cpp-httplib's client), for commands that read a
// running exporter back.
#pragma once

#include <string>

namespace migscope::exporter {

// GETs `url` ("http://HOST:PORT/PATH"; HTTP only) and returns the body. Throws an input error
// for a URL it cannot use, and an unavailable error naming the URL when the exporter does not
// answer 200 within `timeout_s`.
std::string fetch_metrics(const std::string& url, double timeout_s);

}  // namespace migscope::exporter
