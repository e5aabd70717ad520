// Finding migscope-worker.
#include "runner/worker_path.h"

#include <cstdlib>
#include <filesystem>

#include "core/error.h"

namespace migscope::runner {

namespace fs = std::filesystem;

bool builtin_worker(const std::string& given) {
    return given.empty() && !std::getenv("MIGSCOPE_WORKER");
}

std::string find_worker(const std::string& given) {
    if (!given.empty())
        return given;
    if (const char* env = std::getenv("MIGSCOPE_WORKER"))
        return env;
    const fs::path self = fs::read_symlink("/proc/self/exe").parent_path();
    for (const fs::path& p :
         {self / "migscope-worker", self / "../migscope-worker/migscope-worker"}) {
        if (fs::exists(p))
            return fs::weakly_canonical(p).string();
    }
    throw unavailable_error(
        "migscope-worker not found beside migscope or in the build tree (built only where "
        "LibTorch is found); set MIGSCOPE_WORKER or --worker");
}

}  // namespace migscope::runner
