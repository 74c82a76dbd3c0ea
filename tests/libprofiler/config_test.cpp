#include "commlens/profiler/config.hpp"

#include <gtest/gtest.h>

#include <algorithm>
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

TEST(Config, RankFilesAreRemovedAfterTheMergeUnlessAskedToKeepThem) {
  EXPECT_FALSE(Environment{}.load().keep_rank_files);
  Environment keep{{{"COMMLENS_KEEP_RANK_FILES", "1"}}, {}};
  EXPECT_TRUE(keep.load().keep_rank_files);
  Environment bad{{{"COMMLENS_KEEP_RANK_FILES", "maybe"}}, {}};
  EXPECT_FALSE(bad.load().keep_rank_files);
  ASSERT_EQ(bad.warnings.size(), 1u);
  EXPECT_NE(bad.warnings[0].find("COMMLENS_KEEP_RANK_FILES=maybe"), std::string::npos);
}

TEST(Config, OutOfRangeNumbersAreRejected) {
  Environment environment{{{"COMMLENS_FLUSH_MS", "5000"}, {"COMMLENS_BUFFER_EVENTS", "12x"}}, {}};
  const auto config = environment.load();
  EXPECT_EQ(config.flush_interval_ms, 500u);
  EXPECT_EQ(config.buffer_events, 1u << 14);
  EXPECT_EQ(environment.warnings.size(), 2u);
}

TEST(Config, KernelsAreNotRecordedUnlessAskedAndThenInSteps6To8) {
  const auto defaults = Environment{}.load();
  EXPECT_EQ(defaults.kernels, commlens::KernelRecording::Off);
  EXPECT_EQ(defaults.kernel_steps, (std::vector<commlens::StepSpan>{{6, 8}}));
  EXPECT_EQ(defaults.step_range, "step");
  Environment set{{{"COMMLENS_KERNELS", "all"},
                   {"COMMLENS_KERNEL_STEPS", "3, 10-12,100"},
                   {"COMMLENS_STEP_RANGE", "none"}},
                  {}};
  const auto config = set.load();
  EXPECT_TRUE(set.warnings.empty());
  EXPECT_EQ(config.kernels, commlens::KernelRecording::All);
  EXPECT_EQ(config.kernel_steps, (std::vector<commlens::StepSpan>{{3, 3}, {10, 12}, {100, 100}}));
  EXPECT_EQ(commlens::step_spans_text(config.kernel_steps), "3,10-12,100");
  EXPECT_TRUE(config.step_range.empty());
}

TEST(Config, KernelStepsMustBeIncreasingSpansFromOne) {
  for (const char* bad : {"0-3", "8-6", "6-8,7", "5,5", "x", "", "6-", "-6"}) {
    Environment environment{{{"COMMLENS_KERNEL_STEPS", bad}}, {}};
    EXPECT_EQ(environment.load().kernel_steps, (std::vector<commlens::StepSpan>{{6, 8}})) << bad;
    ASSERT_EQ(environment.warnings.size(), 1u) << bad;
    EXPECT_NE(environment.warnings[0].find("COMMLENS_KERNEL_STEPS"), std::string::npos);
    EXPECT_NE(environment.warnings[0].find("using 6-8"), std::string::npos) << environment.warnings[0];
  }
  Environment bad_mode{{{"COMMLENS_KERNELS", "auto"}}, {}};
  EXPECT_EQ(bad_mode.load().kernels, commlens::KernelRecording::Off);
  ASSERT_EQ(bad_mode.warnings.size(), 1u);
  EXPECT_NE(bad_mode.warnings[0].find("off, steps, all"), std::string::npos);
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

TEST(Config, PvarSettingsDefaultToQueuePvarsEvery100MsAndNoCallBoundaries) {
  Environment environment;
  const auto config = environment.load();
  EXPECT_EQ(config.pvars, commlens::split_names(commlens::kDefaultPvars));
  EXPECT_NE(std::find(config.pvars.begin(), config.pvars.end(), "pml_ob1_unexpected_msgq_length"),
            config.pvars.end());
  EXPECT_EQ(config.pvar_period_ms, 100u);
  EXPECT_TRUE(config.pvar_calls.empty());
}

TEST(Config, PvarListAcceptsNamesPrefixPatternsAllAndNone) {
  Environment environment{{{"COMMLENS_PVARS", "a_b, pml_monitoring_*"},
                           {"COMMLENS_PVAR_PERIOD_MS", "5"},
                           {"COMMLENS_PVAR_CALLS", "MPI_Barrier,MPI_Waitall"}},
                          {}};
  auto config = environment.load();
  EXPECT_EQ(config.pvars, (std::vector<std::string>{"a_b", "pml_monitoring_*"}));
  EXPECT_EQ(config.pvar_period_ms, 5u);
  EXPECT_EQ(config.pvar_calls, (std::vector<std::string>{"MPI_Barrier", "MPI_Waitall"}));
  environment.values["COMMLENS_PVARS"] = "all";
  EXPECT_EQ(environment.load().pvars, (std::vector<std::string>{"*"}));
  environment.values["COMMLENS_PVARS"] = "none";
  EXPECT_TRUE(environment.load().pvars.empty());
  EXPECT_TRUE(environment.warnings.empty());
}

TEST(Config, BadPvarSettingsWarnOnceEachNamingTheVariableAndKeepTheDefaults) {
  Environment environment{{{"COMMLENS_PVARS", "queue length"},
                           {"COMMLENS_PVAR_PERIOD_MS", "0"},
                           {"COMMLENS_PVAR_CALLS", "Barrier"}},
                          {}};
  const auto config = environment.load();
  EXPECT_EQ(config.pvars, commlens::split_names(commlens::kDefaultPvars));
  EXPECT_EQ(config.pvar_period_ms, 100u);
  EXPECT_TRUE(config.pvar_calls.empty());
  ASSERT_EQ(environment.warnings.size(), 3u);
  for (const char* variable : {"COMMLENS_PVARS=", "COMMLENS_PVAR_PERIOD_MS=", "COMMLENS_PVAR_CALLS="}) {
    EXPECT_EQ(
        std::count_if(environment.warnings.begin(), environment.warnings.end(),
                      [variable](const std::string& w) { return w.find(variable) != std::string::npos; }),
        1)
        << variable;
  }
}

TEST(Config, NoiseIsKeptForTheRuntimeToParseAndAnEmptyValueWarns) {
  EXPECT_EQ(Environment{}.load().noise, ""); // no noise
  Environment environment{{{"COMMLENS_NOISE", "10:10:1"}}, {}};
  EXPECT_EQ(environment.load().noise, "10:10:1"); // parsed by the runtime when it starts
  EXPECT_TRUE(environment.warnings.empty());
  Environment bad{{{"COMMLENS_NOISE", ""}}, {}};
  bad.load();
  ASSERT_EQ(bad.warnings.size(), 1u);
  EXPECT_EQ(bad.warnings[0],
            "commlens: COMMLENS_NOISE= is not valid (accepted: HZ:MAX_MS[:RANKS] (e.g. 10:10 or "
            "10:10:0-1)); using none");
}

// The GPU runtime's settings are not Config's (contract/runtime_settings.hpp reads them): a value
// of theirs, even a bad one, is kept in `raw` without a warning.
TEST(Config, TheRuntimesSettingsAreOnlyKeptInRaw) {
  const std::string path = testing::TempDir() + "commlens-config-runtime-test.conf";
  {
    std::ofstream file(path);
    file << "COMMLENS_RUNTIME=yes\nCOMMLENS_RUNTIME_SELECT=dynamic\n";
  }
  Environment environment{{{"COMMLENS_CONFIG", path}}, {}};
  const auto config = environment.load();
  EXPECT_TRUE(environment.warnings.empty());
  EXPECT_EQ(config.raw.at("COMMLENS_RUNTIME"), "yes");
  EXPECT_EQ(config.raw.at("COMMLENS_RUNTIME_SELECT"), "dynamic");
  std::remove(path.c_str());
}

} // namespace
