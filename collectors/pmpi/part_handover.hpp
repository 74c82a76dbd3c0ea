#pragma once
// The message a leader of the merge tree sends its parent before its part (finalize_merge.hpp):
// whether the part was made, where it is, and every rank it covers with the place their files
// stay, so that the parent can name them if the part never arrives.
#include "commlens/profiler/merge.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace commlens::pmpi {

struct PartHandover {
  bool made = false;     // the part was made; else the ranks are left behind
  bool in_place = false; // the parent reads the files in the folder both write into; else they follow
  std::vector<std::string> files;      // names in the sender's folder, the part first
  std::vector<std::uint64_t> sizes;    // of the files
  std::vector<RanksLeftBehind> ranks;  // every rank of the sender's subtree, and its folder
  std::vector<RanksLeftBehind> remote; // of those, the ranks in folders rank 0 cannot see
};

std::vector<std::uint8_t> encode_handover(const PartHandover& handover);
// Throws std::runtime_error for bytes that are not a handover.
PartHandover decode_handover(std::span<const std::uint8_t> bytes);

} // namespace commlens::pmpi
