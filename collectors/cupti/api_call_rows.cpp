#include "api_call_rows.hpp"

#include "plugin_context.hpp"
#include "thread_numbers.hpp"

#include <unordered_set>

namespace commlens::cuda {

namespace {

std::unordered_set<std::int64_t> named_functions; // cuda_api_functions rows stored so far

} // namespace

void store_api_calls(const std::vector<CudaApiCall>& calls, std::int64_t (*row_ns)(std::uint64_t),
                     std::string (*name_of)(ApiDomain domain, std::uint32_t callback_id)) {
  if (calls.empty()) {
    return;
  }
  std::vector<std::vector<SqlValue>> functions;
  std::vector<std::vector<SqlValue>> rows;
  rows.reserve(calls.size());
  for (const CudaApiCall& call : calls) {
    const std::int64_t function = api_function_id(call.domain, call.callback_id);
    if (named_functions.insert(function).second) {
      functions.push_back(
          {function, std::string(api_domain_name(call.domain)), name_of(call.domain, call.callback_id)});
    }
    const std::optional<std::uint32_t> thread = mpi_thread_of(call.system_thread);
    rows.push_back({std::int64_t{host().run_rank}, thread ? SqlValue{std::int64_t{*thread}} : SqlValue{},
                    std::int64_t{call.system_thread}, row_ns(call.start_ns), row_ns(call.end_ns), function,
                    std::int64_t{call.correlation_id}});
  }
  if (!functions.empty()) {
    host().store_rows("INSERT OR IGNORE INTO cuda_api_functions (id, domain, name) VALUES (?,?,?)",
                      std::move(functions));
  }
  host().store_rows("INSERT INTO cuda_api_calls (rank, thread, system_thread, start_ns, end_ns, function_id, "
                    "correlation_id) VALUES (?,?,?,?,?,?,?)",
                    std::move(rows));
}

} // namespace commlens::cuda
