# Finds migscope's dependencies: Debian packages (or the offline bundle), optional LibTorch and CUDA.

# An offline bundle made by scripts/bundle-deps.sh: Debian packages unpacked into one prefix.
if(DEFINED MIGSCOPE_BUNDLE_DIR)
  list(PREPEND CMAKE_PREFIX_PATH "${MIGSCOPE_BUNDLE_DIR}/usr")
  set(CMAKE_BUILD_RPATH "${MIGSCOPE_BUNDLE_DIR}/usr/lib/x86_64-linux-gnu")
  # DT_RPATH rather than DT_RUNPATH: a RUNPATH serves a program's direct libraries only, so the
  # bundle's libraries would not find theirs (libgrpc++ needs libgrpc, absl, re2 and c-ares) on
  # a host without them installed.
  add_link_options(-Wl,--disable-new-dtags)
endif()

find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(fmt REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(Threads REQUIRED)
find_package(SQLite3 REQUIRED)  # CMake's FindSQLite3: the results store
find_package(tomlplusplus 3 REQUIRED)  # experiment specs; Debian builds it as a shared library
# gRPC and protobuf (libgrpc++-dev, protobuf-compiler-grpc): the exporter asks the kubelet's
# pod-resources API which container holds which GPU. gRPC's CMake config finds protobuf, absl,
# re2 and c-ares; protoc and grpc_cpp_plugin generate the client from src/exporter/*.proto.
if(DEFINED MIGSCOPE_BUNDLE_DIR)
  # The bundle's protoc and grpc_cpp_plugin run with the bundle's libraries: FindProtobuf runs
  # protoc for its version now, the build runs it through MIGSCOPE_PROTOC.
  set(ENV{LD_LIBRARY_PATH} "${MIGSCOPE_BUNDLE_DIR}/usr/lib/x86_64-linux-gnu:$ENV{LD_LIBRARY_PATH}")
  # gRPC's config finds re2 through Debian's re2.pc, which names /usr/lib (-lre2 there): on a
  # host without libre2-dev the link fails. The bundle's library as the target it looks for.
  if(NOT TARGET re2::re2)
    add_library(re2::re2 SHARED IMPORTED)
    set_target_properties(re2::re2 PROPERTIES
      IMPORTED_LOCATION "${MIGSCOPE_BUNDLE_DIR}/usr/lib/x86_64-linux-gnu/libre2.so"
      INTERFACE_INCLUDE_DIRECTORIES "${MIGSCOPE_BUNDLE_DIR}/usr/include")
  endif()
endif()
find_package(gRPC CONFIG REQUIRED)
find_program(MIGSCOPE_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)
if(NOT Protobuf_PROTOC_EXECUTABLE)
  message(FATAL_ERROR "protoc not found: install the Debian package protobuf-compiler "
                      "(scripts/install-deps.sh does)")
endif()
set(MIGSCOPE_PROTOC "${Protobuf_PROTOC_EXECUTABLE}")
if(DEFINED MIGSCOPE_BUNDLE_DIR)
  set(MIGSCOPE_PROTOC "${CMAKE_COMMAND}" -E env
    "LD_LIBRARY_PATH=${MIGSCOPE_BUNDLE_DIR}/usr/lib/x86_64-linux-gnu" "${Protobuf_PROTOC_EXECUTABLE}")
endif()
if(MIGSCOPE_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(MIGSCOPE_BUILD_BENCH)
  find_package(benchmark QUIET)
endif()

# CUDA toolkit: reported now; the partition backends use it.
include(CheckLanguage)
check_language(CUDA)

# LibTorch: from CMAKE_PREFIX_PATH, else the pip-installed copy in the dependency cache.
set(MIGSCOPE_TORCH_FOUND OFF)
if(NOT MIGSCOPE_WITH_TORCH STREQUAL "OFF")
  # Name the GPU architecture instead of letting Torch's CMake probe for GPUs with a test program
  # (which fails on machines without one). 9.0 = Hopper (H100/H200).
  set(TORCH_CUDA_ARCH_LIST "9.0" CACHE STRING "CUDA architectures for LibTorch code")
  file(GLOB _cached_torch "${MIGSCOPE_DEPS_DIR}/torch-*/torch/share/cmake")
  list(APPEND CMAKE_PREFIX_PATH ${_cached_torch})
  if(MIGSCOPE_WITH_TORCH STREQUAL "ON")
    find_package(Torch REQUIRED)
  else()
    find_package(Torch QUIET)
  endif()
  if(Torch_FOUND)
    set(MIGSCOPE_TORCH_FOUND ON)
  endif()
endif()

# nvml.h, only to check migscope's own NVML declarations against NVIDIA's (tests/nvml).
find_path(MIGSCOPE_NVML_HEADER_DIR nvml.h
  HINTS "${MIGSCOPE_DEPS_DIR}/nvml/nvidia/cu13/include" /usr/local/cuda/include
        /usr/local/cuda/targets/x86_64-linux/include
  NO_DEFAULT_PATH)

# Chart.js (Debian libjs-chart.js) draws the report's plots in the browser; the build embeds it in
# migscope (see src/CMakeLists.txt), so a report needs no file or program beside migscope.
find_file(MIGSCOPE_CHARTJS chart.min.js
  PATHS "${MIGSCOPE_BUNDLE_DIR}/usr/share/javascript/chart.js" /usr/share/javascript/chart.js
  NO_DEFAULT_PATH)
if(NOT MIGSCOPE_CHARTJS)
  message(FATAL_ERROR "Chart.js not found (chart.min.js): install the Debian package libjs-chart.js "
                      "(scripts/install-deps.sh does), or set MIGSCOPE_CHARTJS to the file")
endif()
