// The error an NVML call raises: a migscope::Error that also keeps the call's name and its code.
#pragma once

#include <string>

#include "core/error.h"
#include "nvml/nvml_api.h"

namespace migscope::nvml {

// Callers that must tell one NVML outcome from another (e.g. "no permission") read code().
class CallError : public Error {
  public:
    CallError(ErrorKind kind, const std::string& message, std::string call, api::Return code)
        : Error(kind, message), call_(std::move(call)), code_(code) {}
    const std::string& call() const { return call_; }
    api::Return code() const { return code_; }

  private:
    std::string call_;
    api::Return code_;
};

}  // namespace migscope::nvml
