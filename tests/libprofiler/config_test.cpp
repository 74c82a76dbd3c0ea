#include "commlens/profiler/config.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

struct Environment {
  std::map<std::string, std::string> values;
  std::vector<std::string> warnings;

  commlens::Config load() {
    return commlens::Config::from_environment(
        [this](const std::string& message) { warnings.push_back(message); },
        [this](const char* key) -> const char* {
          auto found = values.find(key);
          return found == values.end() ? nullptr : found->second.c_str();
        });
  }
};

TEST(Config, DefaultsToSummaryModeWithEveryCollector) {
  Environment environment;
  const auto config = environment.load();
  EXPECT_EQ(config.mode, commlens::Mode::Summary);
  EXPECT_EQ(config.output_directory, "commlens-output");
  EXPECT_TRUE(config.collectors.pmpi && config.collectors.mpit && config.collectors.cupti &&
              config.collectors.nvtx);
  EXPECT_TRUE(environment.warnings.empty());
}

TEST(Config, BadModeWarnsOnceNamingTheVariableAndKeepsTheDefault) {
  Environment environment{{{"COMMLENS_MODE", "tracing"}}, {}};
  const auto config = environment.load();
  EXPECT_EQ(config.mode, commlens::Mode::Summary);
  ASSERT_EQ(environment.warnings.size(), 1u);
  EXPECT_NE(environment.warnings[0].find("COMMLENS_MODE=tracing"), std::string::npos);
  EXPECT_NE(environment.warnings[0].find("summary, trace"), std::string::npos);
}

TEST(Config, OutOfRangeNumbersAreRejected) {
  Environment environment{{{"COMMLENS_FLUSH_MS", "5000"}, {"COMMLENS_BUFFER_EVENTS", "12x"}}, {}};
  const auto config = environment.load();
  EXPECT_EQ(config.flush_interval_ms, 500u);
  EXPECT_EQ(config.buffer_events, 1u << 18);
  EXPECT_EQ(environment.warnings.size(), 2u);
}

TEST(Config, CollectorListSelectsOnlyTheNamedCollectors) {
  Environment environment{{{"COMMLENS_COLLECTORS", "pmpi, mpit"}}, {}};
  const auto config = environment.load();
  EXPECT_TRUE(config.collectors.pmpi);
  EXPECT_TRUE(config.collectors.mpit);
  EXPECT_FALSE(config.collectors.cupti);
  EXPECT_FALSE(config.collectors.nvtx);
}

TEST(Config, EnvironmentOverridesTheConfigFile) {
  const std::string path = testing::TempDir() + "commlens-config-test.conf";
  {
    std::ofstream file(path);
    file << "# comment\nCOMMLENS_MODE = trace\nCOMMLENS_FLUSH_MS=100\nnot a setting\n";
  }
  Environment environment{{{"COMMLENS_CONFIG", path}, {"COMMLENS_FLUSH_MS", "250"}}, {}};
  const auto config = environment.load();
  EXPECT_EQ(config.mode, commlens::Mode::Trace);
  EXPECT_EQ(config.flush_interval_ms, 250u);
  ASSERT_EQ(environment.warnings.size(), 1u);
  EXPECT_NE(environment.warnings[0].find(":4:"), std::string::npos);
  std::remove(path.c_str());
}

} // namespace
