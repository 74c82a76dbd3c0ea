#pragma once
// The rows of one rank's table of spans (start_ns, end_ns) that overlap a timeline window: every
// span with start_ns < the window's end and end_ns > its start, so one reaching in from before
// the window counts, in start order. None where the table is missing or the window is empty. The
// timeline's GPU rows (kernels, memsets, synchronisations) are read this way.
#include "commlens/analysis/database.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace commlens::analysis::detail {

// make_row(statement) turns the current result row (the given columns, in order) into a Row.
template <typename Row, typename MakeRow>
std::vector<Row> overlapping_rows(const Database& database, std::string_view table, std::string_view columns,
                                  int rank, std::int64_t start_ns, std::int64_t end_ns, MakeRow make_row) {
  std::vector<Row> rows;
  if (!database.has_table(table) || end_ns <= start_ns)
    return rows;
  auto query = database.prepare("SELECT " + std::string(columns) + " FROM " + std::string(table) +
                                " WHERE rank = ?1 AND start_ns < ?3 AND end_ns > ?2 ORDER BY start_ns");
  query.bind(1, rank).bind(2, start_ns).bind(3, end_ns);
  while (query.step())
    rows.push_back(make_row(query));
  return rows;
}

} // namespace commlens::analysis::detail
