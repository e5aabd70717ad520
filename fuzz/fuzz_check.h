// What every fuzz target asserts: a parser given any bytes either succeeds or refuses them as bad
// input (migscope's input error, exit 2) with a message; any other exception, crash, leak or
// sanitizer report ends the fuzzer with the input that caused it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "core/error.h"

namespace migscope::fuzz {

[[noreturn]] inline void fail(const char* what, const char* message) {
    std::fprintf(stderr, "fuzz: %s: %s\n", what, message);
    std::abort();
}

// Runs `parse`; returns whether it succeeded (false: it refused the input as an input error).
template <typename Parse>
bool accepts(Parse&& parse) {
    try {
        parse();
        return true;
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::kInput)
            fail("an error that is not an input error (exit 2)", e.what());
        if (std::string(e.what()).empty())
            fail("an input error without a message", "");
    } catch (const std::exception& e) {
        fail("not a migscope error (an internal error, exit 1)", e.what());
    }
    return false;
}

}  // namespace migscope::fuzz
