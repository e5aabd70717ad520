// Tests of the activity report's text form: what the probe writes the exporter reads back, and
// anything else is refused.
#include "activity/report.h"

#include <gtest/gtest.h>

using namespace migscope::activity;

namespace {

ActivityReport sample() {
    ActivityReport r;
    r.gpu_uuid = "GPU-8e4a1c2b-0f3d-4e5a-9b6c-7d8e9f0a1b2c";
    r.busy_ns = 1'234'567'890'123;
    r.kernels = 42;
    r.dropped = 3;
    r.started_ns = 100;
    r.sent_ns = 2'000'000'000'000;
    return r;
}

}  // namespace

TEST(ActivityReport, RoundTripsWithAndWithoutAnSmShareAndAJob) {
    ActivityReport r = sample();
    std::optional<ActivityReport> back = decode(encode(r));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->gpu_uuid, r.gpu_uuid);
    EXPECT_EQ(back->busy_ns, r.busy_ns);
    EXPECT_EQ(back->kernels, 42u);
    EXPECT_EQ(back->dropped, 3u);
    EXPECT_EQ(back->started_ns, 100u);
    EXPECT_EQ(back->sent_ns, r.sent_ns);
    EXPECT_FALSE(back->sm_share);

    r.sm_share = 0.25;
    back = decode(encode(r) + "\n");  // a trailing newline is allowed
    ASSERT_TRUE(back);
    EXPECT_DOUBLE_EQ(back->sm_share.value(), 0.25);
    EXPECT_EQ(back->job, "");

    r.job = "resnet18:train:32";
    back = decode(encode(r));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->job, "resnet18:train:32");
    EXPECT_EQ(back->records, "");

    r.records = "graphs";
    EXPECT_NE(encode(r).find(" records=graphs"), std::string::npos);
    back = decode(encode(r));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->records, "graphs");
    EXPECT_FALSE(back->traced_ns);

    r.traced_ns = 123'456;  // a sampling probe's
    back = decode(encode(r));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->traced_ns.value(), 123'456u);
}

TEST(ActivityReport, RefusesAnythingElse) {
    const std::string good = encode(sample());
    EXPECT_TRUE(decode(good));
    EXPECT_FALSE(decode(""));
    EXPECT_FALSE(decode("migscope-activity 2" + good.substr(19)));  // another version
    EXPECT_FALSE(decode(good + " busy_ns=1"));                      // repeated
    EXPECT_FALSE(decode(good + " "));                               // empty field
    EXPECT_FALSE(decode(good + " colour=red"));                     // unknown
    EXPECT_FALSE(decode(good + " sm_share=0"));                     // share out of [0.001, 1]
    EXPECT_FALSE(decode(good + " sm_share=0.0009"));
    EXPECT_FALSE(decode(good + " sm_share=1.5"));
    EXPECT_FALSE(decode(good + " sm_share=nan"));
    EXPECT_TRUE(decode(good + " job=my-job_2.v1+lora"));
    EXPECT_TRUE(decode(good + " records=kernels"));
    EXPECT_TRUE(decode(good + " traced_ns=0"));
    EXPECT_FALSE(decode(good + " traced_ns=-5"));
    EXPECT_FALSE(decode(good + " records=everything"));              // only the probe's two kinds
    EXPECT_FALSE(decode(good + " job="));                            // empty job
    EXPECT_FALSE(decode(good + " job=../etc/passwd"));               // a path is no job
    EXPECT_FALSE(decode(good + " job=" + std::string(129, 'a')));  // over 128 bytes
    EXPECT_TRUE(decode(good + " job=" + std::string(128, 'a')));
    EXPECT_FALSE(
        decode("migscope-activity 1 gpu=GPU-1 busy_ns=1 kernels=1 dropped=0 "
               "started_ns=0"));  // no sent_ns
    EXPECT_FALSE(
        decode("migscope-activity 1 gpu=GPU-1 busy_ns=-1 kernels=1 dropped=0 "
               "started_ns=0 sent_ns=5"));
    EXPECT_FALSE(
        decode("migscope-activity 1 gpu=GPU-1 busy_ns=1x kernels=1 dropped=0 "
               "started_ns=0 sent_ns=5"));
    EXPECT_FALSE(
        decode("migscope-activity 1 gpu=../etc busy_ns=1 kernels=1 dropped=0 "
               "started_ns=0 sent_ns=5"));  // a UUID is letters, digits and '-'
    EXPECT_FALSE(
        decode("migscope-activity 1 gpu=GPU-1 busy_ns=1 kernels=1 dropped=0 "
               "started_ns=9 sent_ns=5"));  // started after it was sent
    EXPECT_FALSE(decode("migscope-activity 1 gpu=" + std::string(97, 'a') +
                        " busy_ns=1 kernels=1 dropped=0 started_ns=0 sent_ns=5"));
}
