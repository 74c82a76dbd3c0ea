#pragma once
// Names of the power-of-two message-size bins of call_stats.size_bin. The keys are stable across
// versions because CI baselines (commlens check) compare histograms by them.
#include <cstdint>
#include <string>
#include <string_view>

namespace commlens::analysis {

// The bin of zero-byte calls (MPI_Barrier, empty messages).
inline constexpr int kZeroBytesBin = -1;

// For people: "[1KiB, 2KiB)", "[512B, 1KiB)", "0B" for the zero-bytes bin.
std::string size_bin_label(int size_bin);
// For machines: "2^10" for bin 10, "0" for the zero-bytes bin.
std::string size_bin_key(int size_bin);
// The label of the bin a key names ("2^10" -> "[1KiB, 2KiB)"); the key itself when it names none.
std::string size_bin_label_of_key(std::string_view key);
// "1KiB", "3B", "1.5MiB": exact for powers of two, one decimal otherwise.
std::string binary_size(std::uint64_t bytes);

} // namespace commlens::analysis
