#pragma once
// What the merge and its plan throw when rank files cannot be merged: the message names the
// directory or file and the problem.
#include <stdexcept>

namespace commlens {

struct MergeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

} // namespace commlens
