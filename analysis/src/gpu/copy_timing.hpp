#pragma once
// A cuda_copies row taken from the CUDA runtime's calls may carry its host call's times instead of
// its time on the GPU (gpu_timed = 0: the collector times a sample of such copies,
// collectors/cupti/runtime_copies.hpp). GPU times, bandwidths and GPU timelines use only the timed
// copies; counts and bytes use every copy. Files written before the column hold timed copies only.
// In summary mode a row may stand for a run of untimed copies (cuda_copies.copies): counts sum it.
#include "commlens/analysis/database.hpp"

#include <string>
#include <string_view>

namespace commlens::analysis::detail {

// SQL: whether the row of `alias` ("c." or "") was timed on the GPU.
std::string copy_gpu_timed(const Database& database, std::string_view alias = "");
// SQL: the row's time on the GPU, NULL for a copy not timed there.
std::string copy_gpu_ns(const Database& database, std::string_view alias = "");
// SQL: whether a row of a table of GPU work (cuda_kernels, cuda_copies, cuda_memsets) holds its
// time on the GPU: every kernel and memset, the timed copies.
std::string ran_on_gpu_clock(const Database& database, std::string_view table);
// SQL: the row's bytes when it was timed on the GPU (what a bandwidth divides), else NULL.
std::string copy_timed_bytes(const Database& database, std::string_view alias = "");
// SQL: how many copies the row stands for; 1 in files written before the column.
std::string copy_count(const Database& database, std::string_view alias = "");

} // namespace commlens::analysis::detail
