// Tests of the exporter's listening socket: --listen parsing, and an address that is never shared
// (a second listener fails, even beside one that allows SO_REUSEPORT).
#include "exporter/listen_socket.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/error.h"

using namespace migscope;
using namespace migscope::exporter;

TEST(ListenSocket, ParsesHostPortForms) {
    EXPECT_EQ(parse_listen_address("127.0.0.1:9401").host, "127.0.0.1");
    EXPECT_EQ(parse_listen_address("127.0.0.1:9401").port, 9401);
    EXPECT_EQ(parse_listen_address(":9401").host, "0.0.0.0");
    EXPECT_EQ(parse_listen_address("[::1]:0").host, "::1");
    for (const char* bad : {"9401", "::1:9401", "host:", "host:x", "host:65536", "host:-1"})
        EXPECT_THROW(parse_listen_address(bad), Error) << bad;
    EXPECT_EQ(address_text("::1", 9401), "[::1]:9401");
    EXPECT_EQ(address_text("0.0.0.0", 9401), "0.0.0.0:9401");
}

TEST(ListenSocket, BindsAnyFreePortAndListens) {
    ListenSocket socket({"127.0.0.1", 0});
    EXPECT_GT(socket.port(), 0);
    int listening = 0;
    socklen_t length = sizeof(listening);
    ASSERT_EQ(getsockopt(socket.fd(), SOL_SOCKET, SO_ACCEPTCONN, &listening, &length), 0);
    EXPECT_EQ(listening, 1);
    int reuse_port = 1;
    length = sizeof(reuse_port);
    ASSERT_EQ(getsockopt(socket.fd(), SOL_SOCKET, SO_REUSEPORT, &reuse_port, &length), 0);
    EXPECT_EQ(reuse_port, 0);
}

TEST(ListenSocket, ASecondListenerOnTheAddressIsRefusedAsUnavailable) {
    ListenSocket first({"127.0.0.1", 0});
    try {
        ListenSocket second({"127.0.0.1", first.port()});
        FAIL() << "a second socket bound the same address";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnavailable);
        EXPECT_NE(std::string(e.what()).find(
                      "cannot listen on 127.0.0.1:" + std::to_string(first.port()) +
                      ": the address is in use (choose another with "
                      "--listen)"),
                  std::string::npos)
            << e.what();
    }
}

// cpp-httplib, which served /metrics before, set SO_REUSEPORT: two exporters then shared one port
// and split the scrapes between them. One that does still cannot make ours share.
TEST(ListenSocket, ARefusalBesideAListenerThatAllowsReusePort) {
    const int other = socket(AF_INET, SOCK_STREAM, 0);
    const int yes = 1;
    ASSERT_EQ(setsockopt(other, SOL_SOCKET, SO_REUSEPORT, &yes, sizeof(yes)), 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(other, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    ASSERT_EQ(listen(other, 4), 0);
    socklen_t length = sizeof(address);
    getsockname(other, reinterpret_cast<sockaddr*>(&address), &length);
    EXPECT_THROW(ListenSocket({"127.0.0.1", ntohs(address.sin_port)}), Error);
    close(other);
}

TEST(ListenSocket, AnAddressThatDoesNotResolveIsUnavailable) {
    try {
        ListenSocket socket({"no-such-host.invalid", 0});
        FAIL() << "bound an address that does not resolve";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnavailable);
        EXPECT_NE(std::string(e.what()).find("cannot listen on no-such-host.invalid:0"),
                  std::string::npos)
            << e.what();
    }
}
