// examples/dl/train.py (the small CNN, 2 ranks) under `commlens run`: every step is one phase, and
// each step's allreduces are exactly the fusion buckets the model's gradient sizes and the threshold
// imply (per tensor, fused with fp16, overlapped with Iallreduce); set-up broadcasts every state
// tensor, momentum buffer and the hyper-parameters once; `commlens report` and `commlens compare`
// show the same numbers. The sizes come from the model itself (examples/dl/parameter_sizes.py);
// the buckets are planned here, independently of the trainer's fusion.py.
#include "harness/database.hpp"
#include "harness/job.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <bit>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace commlens::integration {
namespace {

constexpr int kTrainRanks = 2;
constexpr int kWarmupSteps = 1;
constexpr int kTimedSteps = 2;
constexpr int kSteps = kWarmupSteps + kTimedSteps;

std::string quoted(const std::string& word) {
  std::string out = "'";
  for (char c : word)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string command_output(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), &pclose);
  std::string out;
  char buffer[4096];
  while (const auto read = fread(buffer, 1, sizeof buffer, pipe.get()))
    out.append(buffer, read);
  return out;
}

std::string example(const std::string& file) {
  return std::string(COMMLENS_TEST_DL_EXAMPLES) + "/" + file;
}

// What the model's communication is computed from.
struct ModelSizes {
  std::vector<std::int64_t> parameter_elements; // registration order
  std::int64_t state_dict_tensors = 0;
  std::int64_t state_dict_bytes = 0;
  std::int64_t param_groups = 0;
};

const ModelSizes& small_cnn() {
  static const ModelSizes sizes = [] {
    const auto json = nlohmann::json::parse(command_output(
        python_interpreter() + " " + quoted(example("parameter_sizes.py")) + " --model small"));
    ModelSizes out;
    for (const auto& parameter : json["parameters"])
      out.parameter_elements.push_back(parameter["elements"]);
    for (const auto& tensor : json["state_dict"]) {
      ++out.state_dict_tensors;
      out.state_dict_bytes +=
          tensor["elements"].get<std::int64_t>() * tensor["element_bytes"].get<std::int64_t>();
    }
    out.param_groups = json["param_groups"];
    return out;
  }();
  return sizes;
}

// Horovod's fusion: gradients in backward order (reverse registration), greedily packed into
// buckets of at most `threshold` bytes; 0 means one per tensor. Returns each bucket's bytes.
std::vector<std::int64_t> bucket_bytes(std::int64_t threshold, int element_bytes) {
  const auto& elements = small_cnn().parameter_elements;
  std::vector<std::int64_t> buckets;
  std::int64_t current = 0;
  for (auto it = elements.rbegin(); it != elements.rend(); ++it) {
    const auto bytes = *it * element_bytes;
    if (current > 0 && (threshold == 0 || current + bytes > threshold)) {
      buckets.push_back(current);
      current = 0;
    }
    current += bytes;
  }
  buckets.push_back(current);
  return buckets;
}

// Half of the gradient bytes: several buckets, some holding several tensors.
std::int64_t split_threshold(int element_bytes) {
  const auto& elements = small_cnn().parameter_elements;
  return std::accumulate(elements.begin(), elements.end(), std::int64_t{0}) * element_bytes / 2;
}

struct TrainingRun {
  std::vector<std::string> options;
  std::string mode;
  int status = -1;
  std::string standard_output;
  std::string standard_error;
  std::filesystem::path database;
};

std::vector<std::filesystem::path>& run_directories() {
  static std::vector<std::filesystem::path> directories;
  return directories;
}

const TrainingRun& run_training(const std::string& name, const std::vector<std::string>& options,
                                const std::string& mode) {
  static std::map<std::string, TrainingRun> runs;
  if (const auto found = runs.find(name); found != runs.end())
    return found->second;
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  const auto directory =
      std::filesystem::temp_directory_path() / ("commlens-dl-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory);
  run_directories().push_back(directory);
  TrainingRun run{.options = options, .mode = mode, .database = directory / "out" / "commlens.sqlite"};
  std::string command = std::string(COMMLENS_TEST_CLI) + " run --quiet --mode " + mode + " --output " +
                        quoted((directory / "out").string()) + " -- timeout 120 " + COMMLENS_TEST_MPIRUN +
                        " -np " + std::to_string(kTrainRanks) + " --oversubscribe " + python_interpreter() +
                        " " + quoted(example("train.py")) + " --model small --batch-size 4 --image-size 16" +
                        " --warmup-steps " + std::to_string(kWarmupSteps) + " --steps " +
                        std::to_string(kTimedSteps);
  for (const auto& option : options)
    command += " " + quoted(option);
  command += " > " + quoted((directory / "stdout.txt").string()) + " 2> " +
             quoted((directory / "stderr.txt").string()) + " < /dev/null";
  const int status = std::system(command.c_str());
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::stringstream out, errors;
  out << std::ifstream(directory / "stdout.txt").rdbuf();
  errors << std::ifstream(directory / "stderr.txt").rdbuf();
  run.standard_output = out.str();
  run.standard_error = errors.str();
  return runs.emplace(name, std::move(run)).first->second;
}

std::string function_sql(const std::string& name) {
  return "(SELECT id FROM functions WHERE name = '" + name + "')";
}

class DlTrainer : public ::testing::Test {
protected:
  // The runs' directories stay behind as evidence when a test failed.
  static void TearDownTestSuite() {
    if (!::testing::UnitTest::GetInstance()->Failed())
      for (const auto& directory : run_directories())
        std::filesystem::remove_all(directory);
  }

  // Checks a run's steps against the buckets; `function` is MPI_Allreduce or MPI_Iallreduce.
  void expect_steps(const TrainingRun& run, const std::vector<std::int64_t>& buckets,
                    const std::string& function) {
    ASSERT_EQ(run.status, 0) << run.standard_output << run.standard_error;
    EXPECT_NE(run.standard_output.find("replicas identical: yes"), std::string::npos) << run.standard_output;
    Database db(run.database);
    const auto total = std::accumulate(buckets.begin(), buckets.end(), std::int64_t{0});
    for (int rank = 0; rank < kTrainRanks; ++rank) {
      // Phase 0 set-up, phases 1..kSteps the steps, then the tear-down phase.
      EXPECT_EQ(db.scalar("SELECT count(*) FROM phases WHERE rank = " + std::to_string(rank)), kSteps + 2);
      EXPECT_EQ(db.scalar("SELECT count(*) FROM phases WHERE pcontrol_level = 2 AND rank = " +
                          std::to_string(rank)),
                kSteps + 1);
      for (int phase = 1; phase <= kSteps; ++phase) {
        const auto where = " FROM call_stats WHERE rank = " + std::to_string(rank) +
                           " AND phase = " + std::to_string(phase) + " AND function_id = ";
        EXPECT_EQ(db.scalar("SELECT sum(count)" + where + function_sql(function)),
                  static_cast<std::int64_t>(buckets.size()))
            << "rank " << rank << " phase " << phase;
        EXPECT_EQ(db.scalar("SELECT sum(bytes_sent)" + where + function_sql(function)), total);
        EXPECT_EQ(db.scalar("SELECT sum(bytes_recv)" + where + function_sql(function)), total);
        EXPECT_EQ(db.scalar("SELECT count(*)" + where + function_sql("MPI_Bcast")), 0);
        EXPECT_EQ(db.scalar("SELECT sum(count)" + where + function_sql("MPI_Pcontrol")), 1);
        std::map<int, std::int64_t> bins;
        for (const auto bytes : buckets)
          ++bins[static_cast<int>(std::bit_width(static_cast<std::uint64_t>(bytes))) - 1];
        for (const auto& [bin, calls] : bins)
          EXPECT_EQ(db.scalar("SELECT sum(count)" + where + function_sql(function) +
                              " AND size_bin = " + std::to_string(bin)),
                    calls)
              << "size bin " << bin;
      }
    }
    expect_report_section(run, buckets, function);
  }

  void expect_report_section(const TrainingRun& run, const std::vector<std::int64_t>& buckets,
                             const std::string& function) {
    const auto report = nlohmann::json::parse(command_output(
        std::string(COMMLENS_TEST_CLI) + " report --format json " + quoted(run.database.string())));
    const auto& steps = report["training_steps"];
    ASSERT_TRUE(steps.contains("steps")) << steps.dump();
    EXPECT_EQ(steps["steps"].size(), static_cast<std::size_t>(kSteps));
    EXPECT_EQ(steps["rank_steps"], kSteps * kTrainRanks);
    const auto total = std::accumulate(buckets.begin(), buckets.end(), std::int64_t{0});
    for (const auto& step : steps["steps"]) {
      EXPECT_EQ(step["allreduce_calls"], buckets.size() * kTrainRanks);
      EXPECT_EQ(step["allreduce_bytes"], total * kTrainRanks);
    }
    bool found = false;
    for (const auto& entry : steps["functions"])
      if (entry["name"] == function) {
        found = true;
        EXPECT_EQ(entry["calls_per_step"].get<double>(), double(buckets.size()));
        EXPECT_EQ(entry["bytes_sent_per_step"].get<double>(), double(total));
        EXPECT_EQ(entry["min_calls"], buckets.size());
        EXPECT_EQ(entry["max_calls"], buckets.size());
      }
    EXPECT_TRUE(found) << function << " missing from " << steps["functions"].dump();
    if (run.mode == "trace") // every bucket's exact size is listed once per step
      for (const auto bytes : buckets) {
        const auto exact = std::to_string(bytes) + " B";
        bool listed = false;
        for (const auto& bin : steps["collective_sizes"])
          listed = listed || bin["exact_sizes"].get<std::string>().find(exact) != std::string::npos;
        EXPECT_TRUE(listed) << exact << " not in " << steps["collective_sizes"].dump();
      }
  }
};

TEST_F(DlTrainer, OneAllreducePerTensorWithoutFusion) {
  const auto& run = run_training("per-tensor", {"--fusion-threshold", "0"}, "summary");
  const auto buckets = bucket_bytes(0, 4);
  ASSERT_EQ(buckets.size(), small_cnn().parameter_elements.size());
  expect_steps(run, buckets, "MPI_Allreduce");
}

TEST_F(DlTrainer, FusedFp16BucketsFollowTheThreshold) {
  const auto threshold = split_threshold(2);
  const auto& run =
      run_training("fused-fp16", {"--fusion-threshold", std::to_string(threshold), "--fp16"}, "trace");
  const auto buckets = bucket_bytes(threshold, 2);
  ASSERT_GT(buckets.size(), 1u);
  ASSERT_LT(buckets.size(), small_cnn().parameter_elements.size());
  expect_steps(run, buckets, "MPI_Allreduce");
}

TEST_F(DlTrainer, OverlapPostsOneIallreducePerBucketAndOneWaitall) {
  const auto threshold = split_threshold(4);
  const auto& run =
      run_training("overlap", {"--fusion-threshold", std::to_string(threshold), "--overlap"}, "trace");
  const auto buckets = bucket_bytes(threshold, 4);
  ASSERT_GT(buckets.size(), 1u);
  expect_steps(run, buckets, "MPI_Iallreduce");
  Database db(run.database);
  EXPECT_EQ(db.scalar("SELECT sum(count) FROM call_stats WHERE phase BETWEEN 1 AND " +
                      std::to_string(kSteps) + " AND function_id = " + function_sql("MPI_Waitall")),
            kSteps * kTrainRanks);
  EXPECT_EQ(db.scalar("SELECT count(*) FROM call_stats WHERE phase BETWEEN 1 AND " + std::to_string(kSteps) +
                      " AND function_id = " + function_sql("MPI_Allreduce")),
            0);
  // Trace mode: the report says how long the Iallreduces were pending and how much of it outside MPI.
  const auto report = nlohmann::json::parse(command_output(
      std::string(COMMLENS_TEST_CLI) + " report --format json " + quoted(run.database.string())));
  const auto& pending = report["training_steps"]["nonblocking_allreduce"];
  ASSERT_TRUE(pending.is_object()) << report["training_steps"].dump();
  EXPECT_GT(pending["in_flight_ns"].get<double>(), 0.0);
  EXPECT_GE(pending["in_flight_outside_mpi_ns"].get<double>(), 0.0);
  EXPECT_LE(pending["in_flight_outside_mpi_ns"].get<double>(), pending["in_flight_ns"].get<double>());
}

TEST_F(DlTrainer, SetUpBroadcastsEveryStateTensorMomentumBufferAndTheHyperParameters) {
  const auto& run = run_training("per-tensor", {"--fusion-threshold", "0"}, "summary");
  ASSERT_EQ(run.status, 0) << run.standard_error;
  Database db(run.database);
  const auto& sizes = small_cnn();
  const auto parameters = static_cast<std::int64_t>(sizes.parameter_elements.size());
  const auto parameter_bytes =
      std::accumulate(sizes.parameter_elements.begin(), sizes.parameter_elements.end(), std::int64_t{0}) * 4;
  const auto calls = sizes.state_dict_tensors + parameters + sizes.param_groups;
  const auto bytes = sizes.state_dict_bytes + parameter_bytes + sizes.param_groups * 4 * 8;
  for (int rank = 0; rank < kTrainRanks; ++rank) {
    const auto where = " FROM call_stats WHERE phase = 0 AND rank = " + std::to_string(rank) +
                       " AND function_id = " + function_sql("MPI_Bcast");
    EXPECT_EQ(db.scalar("SELECT sum(count)" + where), calls);
    EXPECT_EQ(db.scalar("SELECT sum(bytes_sent)" + where), rank == 0 ? bytes : 0);
    EXPECT_EQ(db.scalar("SELECT sum(bytes_recv)" + where), rank == 0 ? 0 : bytes);
    EXPECT_EQ(db.scalar("SELECT count(*) FROM call_stats WHERE phase > 0 AND rank = " + std::to_string(rank) +
                        " AND function_id = " + function_sql("MPI_Bcast")),
              0);
  }
}

TEST_F(DlTrainer, CompareShowsThePerStepDifferenceOfTwoThresholds) {
  const auto& per_tensor = run_training("per-tensor", {"--fusion-threshold", "0"}, "summary");
  const auto threshold = split_threshold(2);
  const auto& fused =
      run_training("fused-fp16", {"--fusion-threshold", std::to_string(threshold), "--fp16"}, "trace");
  ASSERT_EQ(per_tensor.status, 0);
  ASSERT_EQ(fused.status, 0);
  const auto comparison = nlohmann::json::parse(
      command_output(std::string(COMMLENS_TEST_CLI) + " compare --format json " +
                     quoted(per_tensor.database.string()) + " " + quoted(fused.database.string())));
  std::map<std::string, nlohmann::json> figures;
  for (const auto& figure : comparison["training_steps"])
    figures[figure["figure"]] = figure;
  ASSERT_TRUE(figures.count("MPI_Allreduce calls")) << comparison["training_steps"].dump();
  EXPECT_EQ(figures["steps"]["a"].get<double>(), kSteps);
  EXPECT_EQ(figures["MPI_Allreduce calls"]["a"].get<double>(), double(bucket_bytes(0, 4).size()));
  EXPECT_EQ(figures["MPI_Allreduce calls"]["b"].get<double>(), double(bucket_bytes(threshold, 2).size()));
  const auto fp16_bytes = bucket_bytes(threshold, 2);
  EXPECT_EQ(figures["MPI_Allreduce bytes sent"]["b"].get<double>(),
            double(std::accumulate(fp16_bytes.begin(), fp16_bytes.end(), std::int64_t{0})));
}

} // namespace
} // namespace commlens::integration
