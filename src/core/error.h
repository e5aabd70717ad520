// Typed errors of the migscope library: what went wrong and which exit code the CLI maps it to.
#pragma once

#include <stdexcept>
#include <string>

namespace migscope {

// Why an operation failed. The CLI maps each kind to one documented exit code.
enum class ErrorKind {
    kRuntime,      // something failed while doing the work (exit 1)
    kInput,        // bad input: unknown GPU or profile, malformed layout or YAML (exit 2)
    kUnavailable,  // a needed facility is missing: no NVIDIA driver, no GPU (exit 3)
};

// The one exception type the library throws. The message is one line and names the offending
// token or call; the library never prints or exits.
class Error : public std::runtime_error {
  public:
    Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
    ErrorKind kind() const { return kind_; }

  private:
    ErrorKind kind_;
};

inline Error input_error(const std::string& message) {
    return Error(ErrorKind::kInput, message);
}
inline Error unavailable_error(const std::string& message) {
    return Error(ErrorKind::kUnavailable, message);
}
inline Error runtime_error(const std::string& message) {
    return Error(ErrorKind::kRuntime, message);
}

// Documented process exit codes (README "Exit codes").
enum ExitCode : int {
    kExitOk = 0,
    kExitFailure = 1,
    kExitBadInput = 2,
    kExitUnavailable = 3,
    kExitCommandNotFound = 127,
    kExitInterrupted = 130,  // Ctrl-C (128 + SIGINT)
};

inline int exit_code_for(ErrorKind kind) {
    switch (kind) {
        case ErrorKind::kInput:
            return kExitBadInput;
        case ErrorKind::kUnavailable:
            return kExitUnavailable;
        case ErrorKind::kRuntime:
            return kExitFailure;
    }
    return kExitFailure;
}

}  // namespace migscope
