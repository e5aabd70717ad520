#!/usr/bin/env bash
# Makes an offline dependency bundle for air-gapped GPU hosts: downloads the Debian packages migscope
# builds with and unpacks them into one prefix (default deps/bundle), which install-deps.sh then uses
# instead of apt. Run it on a Debian 12 machine with network access; copy the folder along.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/deps/bundle}
# libsqlite3-0 rides along with libsqlite3-dev: the GPU host has libsqlite3.so.0 but no sqlite3.h,
# and the dev package's libsqlite3.so link needs its target inside the bundle. The same holds for
# libtomlplusplus3 (Debian builds toml++ as a shared library, not header-only).
packages=(libcli11-dev nlohmann-json3-dev libyaml-cpp-dev libyaml-cpp0.7 libfmt-dev libfmt9
          libsqlite3-dev libsqlite3-0 libtomlplusplus-dev libtomlplusplus3 libgtest-dev libgmock-dev
          libbenchmark-dev libbenchmark1debian libjs-chart.js libmicrohttpd-dev libmicrohttpd12
          libcpp-httplib-dev libcpp-httplib0.11 libssl-dev zlib1g-dev libbrotli-dev libbrotli1
          libgrpc++-dev libgrpc++1.51 libgrpc-dev libgrpc29 libprotobuf-dev libprotobuf32
          libprotobuf-lite32 libprotoc32 protobuf-compiler protobuf-compiler-grpc
          libabsl-dev libabsl20220623 libre2-dev libre2-9 libc-ares-dev libc-ares2)
# libmicrohttpd (migscope exporter's /metrics) needs libgnutls30, which every Debian host has (apt
# uses it). cpp-httplib (the exporter tests' HTTP client) was built with TLS, zlib and brotli: its
# header includes their headers, and libcpp-httplib.so needs libssl3 and zlib1g (on every Debian
# host) and libbrotli1.
# gRPC (the exporter's client of the kubelet's pod-resources API) with what its CMake config
# finds (protobuf, absl, re2, c-ares) and their shared libraries; protoc and grpc_cpp_plugin
# generate the client at build time and run with the bundle's libraries (cmake/Dependencies.cmake).

# Not bundled: gnuplot-nox (the SVG/PNG export of migscope report's plots) and chromium (the
# report's browser test).
# They are programs with dozens of shared libraries each (cairo, pango, lua; chromium's own),
# which would only run from an unpacked prefix with LD_LIBRARY_PATH games. Install them from the
# host's package mirror, or make reports on a machine that has them (the results store is one
# file; copy it there).

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download "${packages[@]}" >&2)
rm -rf "$out" && mkdir -p "$out"
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$out"; done
# Debian's dev packages link libfoo.so to the versioned library; keep only what the build uses.
rm -rf "$out/usr/share/doc" "$out/usr/share/man"
# Static archives (gRPC's alone are 40 MB): the build links the shared libraries. Keep those a
# CMake config imports (Debian's GoogleTest and benchmark_main come only as archives).
find "$out" -name '*.a' | while read -r archive; do
  grep -rqF "/$(basename "$archive")\"" "$out/usr/lib/x86_64-linux-gnu/cmake" || rm "$archive"
done
echo "bundle: $(du -sh "$out" | cut -f1) in $out" >&2
