// Writes the seed corpus of the report fuzzer (analysis/fuzz): small real commlens databases, so
// the bounded run in ctest mutates inputs that reach the report queries instead of spending its
// time discovering the SQLite header. Usage: commlens_fuzz_seed_writer DIRECTORY
#include "commlens/profiler/schema.hpp"
#include "trace_database.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace {

namespace fs = std::filesystem;
using commlens::test::TestDatabase;

// 512-byte pages (SQLite's smallest) keep a full-schema database near 20 KiB.
void compact(TestDatabase& database) {
  database.execute("PRAGMA page_size = 512; VACUUM;");
  database.close();
}

std::string bytes_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIRECTORY\n", argv[0]);
    return 2;
  }
  const fs::path directory = argv[1];
  fs::remove_all(directory);
  fs::create_directories(directory);
  {
    TestDatabase summary(directory / "summary.sqlite");
    commlens::test::fill_three_rank_run(summary);
    compact(summary);
  }
  {
    // Every table the report reads, NVTX ranges and CUDA copies included.
    TestDatabase trace(directory / "trace.sqlite");
    commlens::test::fill_trace_run(trace);
    trace.execute(
        "INSERT INTO nvtx_ranges VALUES (0, 0, 5000, NULL, 'train'), (0, 1500, 3500, NULL, 'step');"
        "INSERT INTO cuda_copies (rank, start_ns, end_ns, device, src_device, dst_device, src_kind, "
        "dst_kind, bytes, stream, copy_kind, path, mpi_call_id, correlation_id) VALUES "
        "(0, 1000, 1080, 0, 0, 0, 'device', 'pinned', 1024, 7, 'DtoH', 'host_staged', 1, 11);");
    compact(trace);
  }
  {
    TestDatabase empty(directory / "zero-events.sqlite"); // a run that made no MPI call
    compact(empty);
  }
  {
    TestDatabase newer(directory / "newer-schema.sqlite");
    newer.execute("PRAGMA user_version = " + std::to_string(commlens::schema::kVersion + 1));
    compact(newer);
  }
  const auto summary = bytes_of(directory / "summary.sqlite");
  write_bytes(directory / "truncated.sqlite", summary.substr(0, summary.size() / 2));
  write_bytes(directory / "header-only.sqlite", summary.substr(0, 100));
  write_bytes(directory / "not-sqlite.txt", "this is not a database\n");
  return 0;
}
