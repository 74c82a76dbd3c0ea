#pragma once
// How the viewer writes times, sizes and rates for people; sizes use the analysis layer's binary
// units so the viewer and the CLI print the same strings.
#include "commlens/analysis/report.hpp"

#include <QString>

#include <cstdint>

namespace commlens::viewer {

QString format_duration(std::int64_t nanoseconds); // "1.25 ms", "830 ns"
// A position on an axis whose ticks are `step_ns` apart, with the decimals that tell neighbouring
// ticks apart: "176.45 ms" where format_duration would round two ticks to "176.4 ms".
QString format_position(std::int64_t nanoseconds, std::int64_t step_ns);
QString format_bytes(std::uint64_t bytes); // "1.5MiB"
QString format_count(std::uint64_t count); // "1,234,567"
QString format_peer(std::int64_t peer);    // "3", "MPI_PROC_NULL", "none"
// GB/s with at most three significant digits and no exponent: "1,523 GB/s", "12.3 GB/s", "5 GB/s",
// "0.241 GB/s".
QString format_rate(double gigabytes_per_second);
// Why a report section is empty, and how to record it when the run did not: "no CUDA copies (run
// on a GPU with the CUDA collectors)".
QString absence_text(const analysis::Absence& absence);

} // namespace commlens::viewer
