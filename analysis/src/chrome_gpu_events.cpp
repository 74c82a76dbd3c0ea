#include "chrome_trace_events.hpp"
#include "gpu/copy_timing.hpp"

#include "commlens/profiler/nvtx_domains.hpp"

#include <nlohmann/json.hpp>

namespace commlens::analysis::detail {
namespace {

// Track (thread) ids above any MPI thread index (at most 1024 per rank), so the tracks never mix
// with MPI threads and sort below them.
constexpr std::int64_t kNvtxTrack = 100000;
constexpr std::int64_t kCopyTrackBase = 200000;   // + device
constexpr std::int64_t kKernelTrackBase = 300000; // + device

// Libraries' ranges repeat the MPI and NCCL calls; only the application's ranges are exported.
std::string nvtx_sql() {
  return "SELECT rank, start_ns, end_ns, COALESCE(name, '(unnamed)'), domain FROM nvtx_ranges WHERE " +
         program_nvtx_domain_sql() + " ORDER BY rank, start_ns";
}

// The copies timed on the GPU (copy_timing.hpp): the others' times are their host calls'.
std::string copies_sql(const Database& database) {
  return "SELECT rank, start_ns, end_ns, device, src_device, dst_device, bytes, stream, copy_kind, path, "
         "link, mpi_call_id FROM cuda_copies WHERE " +
         copy_gpu_timed(database) + " ORDER BY rank, start_ns";
}

constexpr std::string_view kKernelsSql = R"sql(
SELECT rank, start_ns, end_ns, device, stream, name, mpi_call_id FROM cuda_kernels ORDER BY rank, start_ns)sql";

std::string quoted(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string quoted_or_null(const std::optional<std::string>& text) {
  return text ? quoted(*text) : "null";
}

std::string optional_number(const std::optional<std::int64_t>& value) {
  return value ? std::to_string(*value) : "null";
}

// Call ids are strings, as in the MPI events, because they exceed JSON's exact integers.
std::string call_id(const std::optional<std::int64_t>& value) {
  return value ? fmt::format("\"{}\"", *value) : "null";
}

void write_track(std::FILE* out, std::int64_t rank, std::int64_t track, const std::string& name) {
  fmt::print(out,
             ",\n{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":{}}}}}",
             rank, track, quoted(name));
  fmt::print(out,
             ",\n{{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":{},\"tid\":{},\"args\":{{\"sort_"
             "index\":{}}}}}",
             rank, track, track);
}

void write_complete(std::FILE* out, const std::string& category, const std::string& name, std::int64_t rank,
                    std::int64_t track, std::int64_t start_ns, std::int64_t end_ns, const std::string& args) {
  fmt::print(out,
             ",\n{{\"ph\":\"X\",\"cat\":\"{}\",\"name\":{},\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},"
             "\"args\":{{{}}}}}",
             category, quoted(name), rank, track, microseconds(start_ns),
             microseconds(std::max<std::int64_t>(0, end_ns - start_ns)), args);
}

// Names each (rank, device) track of `table` once.
void write_device_tracks(const Database& database, std::FILE* out, std::string_view table, std::int64_t base,
                         std::string_view what) {
  auto tracks = database.prepare(fmt::format("SELECT DISTINCT rank, device FROM {} ORDER BY 1, 2", table));
  while (tracks.step())
    write_track(out, tracks.integer(0), base + tracks.integer(1),
                fmt::format("GPU {} {}", tracks.integer(1), what));
}

// Calls `write_row` on each row of `sql`; returns how many rows there were.
template <typename WriteRow>
std::uint64_t write_each_row(const Database& database, std::string_view sql, WriteRow write_row) {
  std::uint64_t written = 0;
  auto rows = database.prepare(sql);
  for (; rows.step(); ++written)
    write_row(rows);
  return written;
}

std::uint64_t write_nvtx_ranges(const Database& database, std::FILE* out) {
  auto ranks = database.prepare("SELECT DISTINCT rank FROM nvtx_ranges WHERE " + program_nvtx_domain_sql());
  while (ranks.step())
    write_track(out, ranks.integer(0), kNvtxTrack, "NVTX");
  return write_each_row(database, nvtx_sql(), [&](const Statement& range) {
    write_complete(out, "nvtx", range.text(3), range.integer(0), kNvtxTrack, range.integer(1),
                   range.integer(2), fmt::format("\"domain\":{}", quoted_or_null(range.optional_text(4))));
  });
}

std::uint64_t write_copies(const Database& database, std::FILE* out) {
  write_device_tracks(database, out, "cuda_copies", kCopyTrackBase, "copies");
  return write_each_row(database, copies_sql(database), [&](const Statement& copy) {
    const auto path = copy.text(9);
    write_complete(out, "cuda_copy", "copy " + path, copy.integer(0), kCopyTrackBase + copy.integer(3),
                   copy.integer(1), copy.integer(2),
                   fmt::format("\"bytes\":{},\"path\":{},\"link\":{},\"copy_kind\":{},\"src_device\":{},"
                               "\"dst_device\":{},\"stream\":{},\"mpi_call_id\":{}",
                               copy.integer(6), quoted(path), quoted_or_null(copy.optional_text(10)),
                               quoted(copy.text(8)), optional_number(copy.optional_integer(4)),
                               optional_number(copy.optional_integer(5)), copy.integer(7),
                               call_id(copy.optional_integer(11))));
  });
}

std::uint64_t write_kernels(const Database& database, std::FILE* out) {
  write_device_tracks(database, out, "cuda_kernels", kKernelTrackBase, "kernels");
  return write_each_row(database, kKernelsSql, [&](const Statement& kernel) {
    write_complete(out, "cuda_kernel", kernel.text(5), kernel.integer(0),
                   kKernelTrackBase + kernel.integer(3), kernel.integer(1), kernel.integer(2),
                   fmt::format("\"stream\":{},\"mpi_call_id\":{}", kernel.integer(4),
                               call_id(kernel.optional_integer(6))));
  });
}

} // namespace

GpuEventCounts write_chrome_gpu_events(const Database& database, std::FILE* out) {
  GpuEventCounts counts;
  if (database.has_table("nvtx_ranges"))
    counts.nvtx_ranges = write_nvtx_ranges(database, out);
  if (database.has_table("cuda_copies"))
    counts.copies = write_copies(database, out);
  if (database.has_table("cuda_kernels"))
    counts.kernels = write_kernels(database, out);
  return counts;
}

} // namespace commlens::analysis::detail
