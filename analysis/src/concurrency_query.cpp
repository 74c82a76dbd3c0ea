#include "report_queries.hpp"

#include <functional>
#include <queue>
#include <vector>

namespace commlens::analysis::detail {
namespace {

// Only ranks whose calls came from more than one thread can overlap; single-threaded ranks (most
// of a large trace) are not read at all.
constexpr std::string_view kThreadedRanksSql = R"sql(
SELECT rank, threads FROM ranks WHERE threads > 1 AND (?1 IS NULL OR rank = ?1) ORDER BY rank
)sql";

// The rank's calls are the id range rank << 46 .. (rank + 1) << 46 (a rowid range: mpi_calls has
// no index by rank), lane by lane; sorted into start order across its threads.
constexpr std::string_view kCallSpansSql = R"sql(
SELECT start_ns, end_ns FROM mpi_calls WHERE id >= ?1 << 46 AND id < (?1 + 1) << 46
  AND (?2 IS NULL OR phase = ?2) ORDER BY start_ns
)sql";

// A sweep over start-ordered calls with a min-heap of the ends of those still in flight.
class OverlapSweep {
public:
  void add(std::int64_t start, std::int64_t end) {
    finish_until(start);
    advance(start);
    in_flight_.push(end);
    max_in_flight_ = std::max<int>(max_in_flight_, static_cast<int>(in_flight_.size()));
  }
  void finish() { finish_until(INT64_MAX); }
  int max_in_flight() const { return max_in_flight_; }
  std::int64_t overlapped_ns() const { return overlapped_ns_; }

private:
  void finish_until(std::int64_t time) {
    while (!in_flight_.empty() && in_flight_.top() <= time) {
      advance(in_flight_.top());
      in_flight_.pop();
    }
  }
  void advance(std::int64_t time) {
    if (in_flight_.size() >= 2 && time > now_)
      overlapped_ns_ += time - now_;
    now_ = std::max(now_, time);
  }

  std::priority_queue<std::int64_t, std::vector<std::int64_t>, std::greater<>> in_flight_;
  std::int64_t now_ = INT64_MIN;
  std::int64_t overlapped_ns_ = 0;
  int max_in_flight_ = 0;
};

} // namespace

std::vector<RankConcurrency> query_concurrency(const Database& database, const ReportFilter& filter) {
  auto ranks = database.prepare(kThreadedRanksSql);
  ranks.bind(1, filter.rank ? std::optional<std::int64_t>(*filter.rank) : std::nullopt);
  std::vector<RankConcurrency> concurrency;
  while (ranks.step()) {
    auto spans = database.prepare(kCallSpansSql);
    spans.bind(1, ranks.integer(0));
    spans.bind(2, filter.phase ? std::optional<std::int64_t>(*filter.phase) : std::nullopt);
    OverlapSweep sweep;
    while (spans.step())
      sweep.add(spans.integer(0), spans.integer(1));
    sweep.finish();
    concurrency.push_back({static_cast<int>(ranks.integer(0)), static_cast<int>(ranks.integer(1)),
                           sweep.max_in_flight(), sweep.overlapped_ns()});
  }
  return concurrency;
}

} // namespace commlens::analysis::detail
