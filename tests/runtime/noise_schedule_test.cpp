// COMMLENS_NOISE's parsing and the delay schedule (runtime/noise/).
#include "noise/noise_schedule.hpp"

#include <gtest/gtest.h>

namespace commlens::runtime::noise {
namespace {

std::optional<NoiseSettings> parsed(std::string_view text) {
  std::string error;
  auto settings = parse_noise(text, &error);
  EXPECT_EQ(settings.has_value(), error.empty()) << text;
  return settings;
}

TEST(NoiseSettings, ParsesRateDelayAndRanks) {
  EXPECT_EQ(parsed("10:10"), (NoiseSettings{10, 10, {}}));
  EXPECT_EQ(parsed("0.5:2.5:3"), (NoiseSettings{0.5, 2.5, {3}}));
  EXPECT_EQ(parsed("100:0:0-2,5,1"), (NoiseSettings{100, 0, {0, 1, 2, 5}}));
}

TEST(NoiseSettings, RejectsWhatItCannotRun) {
  for (const char* text :
       {"", "10", "10:", ":10", "0:10", "-1:10", "1001:1", "10:-1", "10:1001", "x:1", "10:1:", "10:1:a",
        "10:1:3-1", "10:1:1,", "10:1:-1", "10:1:1:2", "nan:1", "inf:1"}) {
    EXPECT_FALSE(parsed(text)) << text;
  }
}

TEST(NoiseSettings, AppliesToTheNamedRanksOrEveryRank) {
  const NoiseSettings some{10, 10, {1, 3}};
  EXPECT_TRUE(applies_to(some, 1));
  EXPECT_FALSE(applies_to(some, 2));
  EXPECT_TRUE(applies_to(NoiseSettings{10, 10, {}}, 7));
  EXPECT_EQ(describe(some), "10 Hz, 0-10 ms, ranks 1,3");
  EXPECT_EQ(describe(NoiseSettings{2.5, 0.5, {}}), "2.5 Hz, 0-0.5 ms, every rank");
}

constexpr std::uint64_t kMs = 1'000'000;

TEST(NoiseSchedule, OwesOneBoundedDelayPerPeriod) {
  const NoiseSettings settings{10, 10, {}}; // a delay every 100 ms, up to 10 ms
  NoiseSchedule schedule(settings, 42, 0);
  const std::uint64_t first = schedule.next_due_ns();
  EXPECT_LT(first, 100 * kMs);
  EXPECT_EQ(schedule.owed(first - 1), 0u);
  std::uint64_t total = 0;
  int delays = 0;
  // Polled every millisecond for 10 s: 100 delays, each at most 10 ms, about 5 ms on average.
  for (std::uint64_t now = 0; now < 10'000 * kMs; now += kMs) {
    const std::uint64_t owed = schedule.owed(now);
    EXPECT_LE(owed, 10 * kMs);
    total += owed;
    delays += owed > 0 ? 1 : 0;
  }
  EXPECT_GE(delays, 95); // a delay drawn as 0 owes nothing
  EXPECT_GT(total, 350 * kMs);
  EXPECT_LT(total, 650 * kMs);
}

TEST(NoiseSchedule, IsRepeatablePerSeedAndDiffersAcrossSeeds) {
  const NoiseSettings settings{50, 5, {}};
  NoiseSchedule a(settings, 7, 1000), b(settings, 7, 1000), c(settings, 8, 1000);
  EXPECT_EQ(a.next_due_ns(), b.next_due_ns());
  EXPECT_NE(a.next_due_ns(), c.next_due_ns());
  for (std::uint64_t now = 0; now < 1000 * kMs; now += 3 * kMs) {
    EXPECT_EQ(a.owed(now), b.owed(now));
  }
}

TEST(NoiseSchedule, SkipsDelaysDueLongBeforeTheRankLooked) {
  NoiseSchedule schedule(NoiseSettings{10, 10, {}}, 1, 0);
  // 10 s without a look: only the delays of the last period are owed, not a hundred.
  EXPECT_LE(schedule.owed(10'000 * kMs), 20 * kMs);
  EXPECT_GT(schedule.next_due_ns(), 10'000 * kMs);
}

TEST(NoiseSchedule, ZeroMaximumOwesNothing) {
  NoiseSchedule schedule(NoiseSettings{1000, 0, {}}, 3, 0);
  EXPECT_EQ(schedule.owed(5000 * kMs), 0u);
}

} // namespace
} // namespace commlens::runtime::noise
