#pragma once
// Calls aggregated per rank x function x communicator x size bin x peer: the shape of call_stats.
// Tests build the expected table from a program's documented pattern and compare it with the table
// read from call_stats and, in trace mode, with the one rebuilt from mpi_calls.
#include <compare>
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "database.hpp"

namespace commlens::integration {

inline constexpr std::int64_t kNoPeer = -1, kProcNullPeer = -2, kAnySourcePeer = -3;
inline constexpr std::int64_t kNoCommunicator = -1, kWorld = 0;

// k such that bytes lie in [2^k, 2^(k+1)); -1 for zero bytes.
int size_bin(std::int64_t bytes);

struct CallKey {
  int rank;
  std::string function;
  std::int64_t comm;
  int size_bin;
  std::int64_t peer;
  auto operator<=>(const CallKey&) const = default;
};

struct CallTotals {
  std::int64_t count = 0, bytes_sent = 0, bytes_recv = 0;
  bool operator==(const CallTotals&) const = default;
};

class CallTable {
public:
  // Records `times` calls, each sending `sent` and posting `received` bytes.
  void add(int rank, const std::string& function, std::int64_t comm, std::int64_t peer, std::int64_t sent,
           std::int64_t received, std::int64_t times = 1);
  void merge(const CallKey& key, const CallTotals& totals);

  const std::map<CallKey, CallTotals>& rows() const { return rows_; }
  std::set<std::string> functions() const;
  std::int64_t count(int rank, const std::string& function) const;
  std::int64_t count_on(int rank, const std::string& function, std::int64_t comm) const;
  CallTotals totals(int rank, const std::string& function) const;

  CallTable restricted_to(const std::set<std::string>& functions) const;
  CallTable without_communicator() const; // for calls whose communicator is not part of the contract
  template <class Change> CallTable transformed(Change change) const {
    CallTable out;
    for (const auto& [stored_key, totals] : rows_) {
      CallKey key = stored_key;
      change(key);
      out.merge(key, totals);
    }
    return out;
  }

private:
  std::map<CallKey, CallTotals> rows_;
};

// Every row of call_stats (summed over phases); an empty set means every function.
CallTable read_call_stats(const Database& db, const std::set<std::string>& functions = {});
// mpi_calls aggregated the same way (size bin from max(bytes_sent, bytes_recv), NULL comm = -1).
CallTable read_traced_calls(const Database& db, const std::set<std::string>& functions = {});

// A readable list of the rows that differ; empty when the tables are equal.
std::string difference(const CallTable& expected, const CallTable& actual);
// Calls per rank x function only (bins, peers and bytes ignored); empty when equal.
std::string count_difference(const CallTable& expected, const CallTable& actual);

} // namespace commlens::integration
