// Fuzz target: the results store's reader on any file: opened read-only (as `results list`,
// `results show` and `report` open it), every run listed and read with its trace.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_check.h"
#include "store/store.h"

namespace {

// One file per fuzzing process, rewritten for every input.
const std::string& store_path() {
    static const std::string path = [] {
        // Memory (tmpfs) where there is one: a file is written for every input.
        const char* dir = std::getenv("TMPDIR");
        if (!dir)
            dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        return std::string(dir) + "/migscope-fuzz-store-" + std::to_string(getpid()) + ".db";
    }();
    // Removed when the fuzzer exits.
    static const struct Remover {
        ~Remover() { std::remove(path.c_str()); }
    } remover;
    return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace migscope;
    const std::string& path = store_path();
    for (const char* suffix : {"-wal", "-shm"})
        std::remove((path + suffix).c_str());
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0)
        fuzz::fail("cannot write the input to", path.c_str());
    fuzz::accepts([&] {
        store::Store db = store::Store::open(path, store::OpenMode::kRead);
        for (const store::RunRecord& run : db.list_runs())
            db.get_run(run.id, store::TraceLoad::kWith);
        db.stored_cells("fuzz");
    });
    return 0;
}
