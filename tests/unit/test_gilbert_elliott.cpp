// Gilbert-Elliott as average loss and mean burst (linkem/gilbert_elliott.hpp): the closed
// forms of the simple Gilbert model, round trips for any state loss probabilities, the loss
// process itself giving the figures, and errors that say what is allowed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "linkem/gilbert_elliott.hpp"
#include "linkem/link_params.hpp"
#include "linkem/loss.hpp"

namespace linkem {
namespace {

using ::testing::HasSubstr;

TEST(GilbertElliott, SimpleGilbertClosedForms) {
    // The wifi_lossy preset: p 0.025, r 0.5: 4.76 % lost in bursts of 2.
    const GeLossAndBurst f = ge_loss_and_burst({0.025, 0.5, 0, 1});
    EXPECT_DOUBLE_EQ(f.average_loss, 0.025 / 0.525);
    EXPECT_DOUBLE_EQ(f.mean_burst, 2.0);
    EXPECT_DOUBLE_EQ(f.mean_bad_stay, 2.0);
    // 1 % in bursts of 4: r = 1/4, p = 0.01 / (4 * 0.99).
    const GeChain c = ge_from_loss_and_burst(0.01, 4);
    EXPECT_DOUBLE_EQ(c.r, 0.25);
    EXPECT_NEAR(c.p, 0.01 / (4 * 0.99), 1e-15);
    EXPECT_EQ(c.loss_good, 0.0);
    EXPECT_EQ(c.loss_bad, 1.0);
    // No loss: the chain stays good; r keeps the burst asked for.
    const GeChain none = ge_from_loss_and_burst(0, 3);
    EXPECT_EQ(none.p, 0.0);
    EXPECT_DOUBLE_EQ(none.r, 1.0 / 3);
    EXPECT_EQ(ge_loss_and_burst(none).average_loss, 0.0);
    EXPECT_EQ(ge_loss_and_burst(none).mean_burst, 0.0);
    // Bursts of 1 at 50 %: the chain alternates (p = r = 1).
    const GeChain alt = ge_from_loss_and_burst(0.5, 1);
    EXPECT_DOUBLE_EQ(alt.p, 1.0);
    EXPECT_DOUBLE_EQ(alt.r, 1.0);
    // Never leaving bad: every packet lost, one endless burst.
    const GeLossAndBurst stuck = ge_loss_and_burst({0.1, 0, 0, 1});
    EXPECT_EQ(stuck.average_loss, 1.0);
    EXPECT_TRUE(std::isinf(stuck.mean_burst));
    EXPECT_TRUE(std::isinf(stuck.mean_bad_stay));
}

TEST(GilbertElliott, RoundTripsForAnyStateLossProbabilities) {
    const double states[][2] = {{0, 1}, {0, 0.8}, {0.001, 1}, {0.01, 0.6}, {0.05, 0.5}};
    int checked = 0, refused = 0;
    for (const auto& st : states)
        for (double loss : {0.0005, 0.01, 0.048, 0.2, 0.45})
            for (double burst : {1.0, 1.3, 2.0, 5.0, 40.0}) {
                const double lg = st[0], lb = st[1];
                if (loss <= lg || loss >= lb) continue;
                const GeBurstRange range = ge_mean_burst_range(loss, lg, lb);
                if (burst < range.min * (1 - 1e-9) || burst > range.max * (1 + 1e-9)) {
                    EXPECT_THROW((void)ge_from_loss_and_burst(loss, burst, lg, lb), ParamError);
                    ++refused;
                    continue;
                }
                if (burst >= range.max * (1 - 1e-9)) continue;  // a chain that hardly moves
                const GeChain c = ge_from_loss_and_burst(loss, burst, lg, lb);
                SCOPED_TRACE(testing::Message()
                             << "loss " << loss << " burst " << burst << " lg " << lg << " lb "
                             << lb << " -> p " << c.p << " r " << c.r);
                EXPECT_GE(c.p, 0.0);
                EXPECT_LE(c.p, 1.0);
                EXPECT_GT(c.r, 0.0);
                EXPECT_LE(c.r, 1.0);
                LinkParams p;
                p.loss_model = LossModel::gilbert_elliott;
                p.ge_p = c.p;
                p.ge_r = c.r;
                p.ge_loss_good = lg;
                p.ge_loss_bad = lb;
                EXPECT_NO_THROW(validate(p));
                const GeLossAndBurst f = ge_loss_and_burst(c);
                EXPECT_NEAR(f.average_loss, loss, 1e-12);
                EXPECT_NEAR(f.mean_burst, burst, 1e-9 * burst);
                // The other way round: the chain back from its own figures.
                const GeChain back = ge_from_loss_and_burst(f.average_loss, f.mean_burst, lg, lb);
                EXPECT_NEAR(back.p, c.p, 1e-9);
                EXPECT_NEAR(back.r, c.r, 1e-9);
                ++checked;
            }
    EXPECT_GT(checked, 50);
    EXPECT_GT(refused, 5);  // bursts too short for a high loss, too long for a lossy good state
}

// The loss process with the chain converted from (average loss, mean burst) loses that
// share in runs of that mean length. 4 M packets per case with a fixed seed; the tolerance is
// 5 standard errors from 40 batches of 100 000 packets (batch means: the runs and the losses
// are correlated through the chain, so the per-packet formulas would understate it).
TEST(GilbertElliott, TheLossProcessGivesTheFigures) {
    struct Case {
        double loss, burst, lg, lb;
    };
    for (const Case k :
         {Case{0.02, 3, 0, 1}, Case{0.05, 2, 0.002, 0.7}, Case{0.1, 1.5, 0.01, 0.5}}) {
        SCOPED_TRACE(testing::Message() << "loss " << k.loss << " burst " << k.burst);
        const GeChain c = ge_from_loss_and_burst(k.loss, k.burst, k.lg, k.lb);
        LossProcess l;
        l.configure({LossModel::gilbert_elliott, 0, c.p, c.r, c.loss_good, c.loss_bad});
        Rng rng(17);
        constexpr int kBatches = 40, kPerBatch = 100'000;
        std::vector<double> loss(kBatches), burst(kBatches);
        bool prev = false;
        for (int b = 0; b < kBatches; ++b) {
            std::size_t lost = 0, runs = 0;
            for (int i = 0; i < kPerBatch; ++i) {
                const bool x = l.lose(rng);
                lost += x;
                runs += prev && !x;  // a run ends
                prev = x;
            }
            loss[b] = static_cast<double>(lost) / kPerBatch;
            burst[b] = runs ? static_cast<double>(lost) / static_cast<double>(runs) : 0;
        }
        auto mean_se = [](const std::vector<double>& v) {
            double m = 0, q = 0;
            for (double x : v)
                m += x;
            m /= static_cast<double>(v.size());
            for (double x : v)
                q += (x - m) * (x - m);
            return std::pair{m, std::sqrt(q / static_cast<double>(v.size() - 1) /
                                          static_cast<double>(v.size()))};
        };
        const auto [mean_loss, se_loss] = mean_se(loss);
        const auto [mean_burst, se_burst] = mean_se(burst);
        EXPECT_NEAR(mean_loss, k.loss, 5 * se_loss);
        EXPECT_NEAR(mean_burst, k.burst, 5 * se_burst);
        EXPECT_LT(se_burst, 0.05 * k.burst);  // the check has teeth
    }
}

// With a bad state that passes some packets, a stay in bad is longer than a burst.
TEST(GilbertElliott, BadStayAndBurstDifferWhenTheStatesAreNotZeroAndOne) {
    const GeLossAndBurst f = ge_loss_and_burst({0.01, 0.2, 0, 0.5});
    EXPECT_DOUBLE_EQ(f.mean_bad_stay, 5.0);
    EXPECT_LT(f.mean_burst, 2.0);  // at most ~1 / (1 - 0.5) within a stay
    EXPECT_NEAR(f.average_loss, 0.5 * 0.01 / 0.21, 1e-15);
}

void expect_error(double loss, double burst, double lg, double lb, const char* field,
                  const std::vector<std::string>& parts) {
    try {
        (void)ge_from_loss_and_burst(loss, burst, lg, lb);
        ADD_FAILURE() << "no error for loss " << loss << " burst " << burst;
    } catch (const ParamError& e) {
        EXPECT_EQ(e.field(), field) << e.what();
        for (const std::string& part : parts)
            EXPECT_THAT(e.message(), HasSubstr(part));
    }
}

TEST(GilbertElliott, ErrorsSayWhatIsAllowed) {
    expect_error(0.01, 0.5, 0, 1, "mean_burst",
                 {"0.5 is out of range; a burst is at least 1 packet: allowed 1 packets or more"});
    // 60 % loss needs bursts of at least 0.6 / 0.4 = 1.5 (else p > 1).
    expect_error(0.6, 1.2, 0, 1, "mean_burst",
                 {"1.2 packets is not possible with an average loss of 0.6", "allowed 1.5"});
    expect_error(1, 2, 0, 1, "average_loss", {"1 is out of range; allowed 0 (ge_loss_good)"});
    expect_error(-0.1, 2, 0, 1, "average_loss", {"-0.1 is out of range"});
    expect_error(0.001, 2, 0.01, 0.5, "average_loss", {"allowed 0.01 (ge_loss_good) .. below 0.5"});
    expect_error(0.1, 2, 0.3, 0.3, "ge_loss_bad", {"not above ge_loss_good"});
    expect_error(0.1, 2, 0, 1.5, "ge_loss_bad", {"1.5 is out of range; allowed 0 .. 1"});
    expect_error(0.1, std::nan(""), 0, 1, "mean_burst", {"out of range"});
    // A bad state that loses half its packets: runs of losses average at most 1 / (1 - 0.5)
    // ... and the chain's own pace bounds them: the range is finite.
    const GeBurstRange r = ge_mean_burst_range(0.1, 0, 0.5);
    EXPECT_TRUE(std::isfinite(r.max));
    expect_error(0.1, r.max + 1, 0, 0.5, "mean_burst", {"allowed 1 .. below"});
    EXPECT_THROW((void)ge_loss_and_burst({1.5, 0.5, 0, 1}), ParamError);
}

}  // namespace
}  // namespace linkem
