#include "call_table.hpp"

#include <algorithm>
#include <bit>
#include <sstream>

namespace commlens::integration {
namespace {

std::string in_list(const std::set<std::string>& functions) {
  if (functions.empty())
    return "1";
  std::string sql = "f.name IN (";
  for (const auto& name : functions)
    sql += (sql.back() == '(' ? "'" : ",'") + name + "'";
  return sql + ")";
}

std::string describe(const CallKey& key) {
  std::ostringstream out;
  out << "rank " << key.rank << " " << key.function << " comm " << key.comm << " bin " << key.size_bin
      << " peer " << key.peer;
  return out.str();
}

std::string describe(const CallTotals& totals) {
  std::ostringstream out;
  out << "count " << totals.count << " sent " << totals.bytes_sent << " recv " << totals.bytes_recv;
  return out.str();
}

template <class Key, class Totals>
std::string diff_maps(const std::map<Key, Totals>& expected, const std::map<Key, Totals>& actual) {
  std::ostringstream out;
  for (const auto& [key, want] : expected) {
    auto found = actual.find(key);
    if (found == actual.end())
      out << "  missing  " << describe(key) << ": expected " << describe(want) << "\n";
    else if (!(found->second == want))
      out << "  wrong    " << describe(key) << ": expected " << describe(want) << ", stored "
          << describe(found->second) << "\n";
  }
  for (const auto& [key, got] : actual)
    if (!expected.contains(key))
      out << "  extra    " << describe(key) << ": stored " << describe(got) << "\n";
  return out.str();
}

} // namespace

int size_bin(std::int64_t bytes) {
  return bytes <= 0 ? -1 : static_cast<int>(std::bit_width(static_cast<std::uint64_t>(bytes))) - 1;
}

void CallTable::add(int rank, const std::string& function, std::int64_t comm, std::int64_t peer,
                    std::int64_t sent, std::int64_t received, std::int64_t times) {
  if (times <= 0)
    return;
  merge({rank, function, comm, size_bin(std::max(sent, received)), peer},
        {times, sent * times, received * times});
}

void CallTable::merge(const CallKey& key, const CallTotals& totals) {
  auto& row = rows_[key];
  row.count += totals.count;
  row.bytes_sent += totals.bytes_sent;
  row.bytes_recv += totals.bytes_recv;
}

std::set<std::string> CallTable::functions() const {
  std::set<std::string> names;
  for (const auto& [key, totals] : rows_)
    names.insert(key.function);
  return names;
}

std::int64_t CallTable::count(int rank, const std::string& function) const {
  return totals(rank, function).count;
}

std::int64_t CallTable::count_on(int rank, const std::string& function, std::int64_t comm) const {
  std::int64_t sum = 0;
  for (const auto& [key, totals] : rows_)
    if (key.rank == rank && key.function == function && key.comm == comm)
      sum += totals.count;
  return sum;
}

CallTotals CallTable::totals(int rank, const std::string& function) const {
  CallTotals sum;
  for (const auto& [key, totals] : rows_)
    if (key.rank == rank && key.function == function) {
      sum.count += totals.count;
      sum.bytes_sent += totals.bytes_sent;
      sum.bytes_recv += totals.bytes_recv;
    }
  return sum;
}

CallTable CallTable::restricted_to(const std::set<std::string>& functions) const {
  CallTable out;
  for (const auto& [key, totals] : rows_)
    if (functions.contains(key.function))
      out.merge(key, totals);
  return out;
}

CallTable CallTable::without_communicator() const {
  return transformed([](CallKey& key) { key.comm = kNoCommunicator; });
}

CallTable read_call_stats(const Database& db, const std::set<std::string>& functions) {
  CallTable table;
  const auto rows = db.query("SELECT c.rank, f.name, c.comm_id, c.size_bin, c.peer, SUM(c.count), "
                             "SUM(c.bytes_sent), SUM(c.bytes_recv) "
                             "FROM call_stats c JOIN functions f ON f.id = c.function_id WHERE " +
                             in_list(functions) + " GROUP BY 1, 2, 3, 4, 5");
  for (const auto& r : rows)
    table.merge({static_cast<int>(r[0].as_int()), r[1].text.value_or("?"), r[2].as_int(kNoCommunicator),
                 static_cast<int>(r[3].as_int()), r[4].as_int()},
                {r[5].as_int(), r[6].as_int(), r[7].as_int()});
  return table;
}

CallTable read_traced_calls(const Database& db, const std::set<std::string>& functions) {
  CallTable table;
  const auto rows = db.query("SELECT m.rank, f.name, m.comm_id, m.peer, m.bytes_sent, m.bytes_recv "
                             "FROM mpi_calls m JOIN functions f ON f.id = m.function_id WHERE " +
                             in_list(functions));
  for (const auto& r : rows)
    table.add(static_cast<int>(r[0].as_int()), r[1].text.value_or("?"), r[2].as_int(kNoCommunicator),
              r[3].as_int(), r[4].as_int(), r[5].as_int());
  return table;
}

std::string difference(const CallTable& expected, const CallTable& actual) {
  return diff_maps(expected.rows(), actual.rows());
}

std::string count_difference(const CallTable& expected, const CallTable& actual) {
  const auto counts_only = [](CallKey& key) {
    key.comm = 0;
    key.size_bin = 0;
    key.peer = 0;
  };
  std::map<CallKey, CallTotals> want, got;
  const CallTable expected_counts = expected.transformed(counts_only);
  const CallTable actual_counts = actual.transformed(counts_only);
  for (const auto& [key, totals] : expected_counts.rows())
    want[key] = {totals.count, 0, 0};
  for (const auto& [key, totals] : actual_counts.rows())
    got[key] = {totals.count, 0, 0};
  return diff_maps(want, got);
}

} // namespace commlens::integration
