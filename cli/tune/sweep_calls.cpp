#include "tune/sweep_calls.hpp"

#include "commlens/analysis/database.hpp"

namespace commlens::cli {

std::vector<runtime::tuning::CandidateCall> read_calls(const std::filesystem::path& database_path,
                                                       const std::string& function) {
  const analysis::Database database(database_path);
  auto query = database.prepare(R"sql(
SELECT o.bytes, o.rank, o.algorithm, o.end_ns - o.start_ns FROM runtime_ops o
JOIN functions f ON f.id = o.function_id
JOIN mpi_calls m ON m.id = o.mpi_call_id
WHERE f.name = ?1 AND o.decision = 'runtime' AND o.ipc_opens = 0 AND m.phase > 0)sql");
  query.bind(1, function);
  std::vector<runtime::tuning::CandidateCall> calls;
  while (query.step())
    calls.push_back(
        {static_cast<std::uint64_t>(query.integer(0)), query.integer(1), query.text(2), query.integer(3)});
  return calls;
}

} // namespace commlens::cli
