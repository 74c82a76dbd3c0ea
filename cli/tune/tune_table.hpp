#pragma once
// The table `commlens tune` writes: what its measurements ran on, the default file name for the
// machine's GPU, and the merge with the table already in that file (rules of other shapes kept).
#include "measured_rules.hpp"

#include <string>

namespace commlens::cli {

// The measurement every rule of one sweep names: this machine, now, `command`. `mps`: whether the
// CUDA MPS control daemon ran (mps_detection.hpp).
runtime::tuning::Measurement describe_measurement(const std::string& id, const std::string& gpu, int ranks,
                                                  int gpus, bool mps, const std::string& command);

// runtime/tuning/MODEL.json when run in a source tree (MODEL: the GPU name's first word of
// letters then digits, lower case: h100, h200), else MODEL.json.
std::string default_output(const std::string& gpu_name);

// `measured`'s rules first, then those of the table in `path` (when it exists and parses) for
// other shapes than `shape`, with the measurements they name; point_to_point from `measured` when
// it was measured, else from the file. Throws TableError when the file exists but is no table.
runtime::tuning::Table merge_with_file(runtime::tuning::Table measured, const std::string& path,
                                       const runtime::tuning::MeasuredShape& shape);

} // namespace commlens::cli
