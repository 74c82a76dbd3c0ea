#pragma once
// Where a measured table's rules come from (table format 2): the table lists its measurements
// (what ran: GPU, host, ranks, GPUs, MPS, date, command) under "measurements", and each rule that
// a measurement produced names it in its "measured" object, with the sizes it won at and, per size,
// the winner's and the runner-up's times. Rules without one are reasoned (their "why" says so).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace commlens::runtime::tuning {

struct Measurement {
  std::string id;      // what rules name it by ("allreduce", "trees", ...)
  std::string gpu;     // cudaDeviceProp::name
  std::string host;    // the machine's host name
  int ranks = 0;       // ranks of the measured communicator
  int gpus = 0;        // distinct GPUs they ran on
  bool mps = false;    // whether the CUDA MPS control daemon was running
  std::string date;    // UTC, ISO 8601
  std::string command; // the command that measured (commlens tune ...)

  bool operator==(const Measurement&) const = default;
};

// One measured size: the fastest candidate and the one after it (empty when only one ran).
struct MeasuredPoint {
  std::uint64_t bytes = 0;
  std::string winner;
  double winner_us = 0;
  std::string runner_up;
  double runner_up_us = 0;

  bool operator==(const MeasuredPoint&) const = default;
};

struct RuleMeasurement {
  std::string measurement; // a Measurement's id
  std::vector<MeasuredPoint> points;

  bool operator==(const RuleMeasurement&) const = default;
};

// The tables' rule kinds carry this member.
using OptionalMeasurement = std::optional<RuleMeasurement>;

} // namespace commlens::runtime::tuning
