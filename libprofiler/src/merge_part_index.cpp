#include "merge_part_index.hpp"

#include "trace_pages_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace commlens::merge_part {

namespace fs = std::filesystem;

void write_ranks(const SqliteDatabase& db, const std::vector<RankEntry>& entries, const std::string& folder) {
  auto insert = db.prepare("INSERT INTO merge_part_ranks VALUES (?,?,?,?,?,?,?,?,?,?)");
  const fs::path base = fs::absolute(folder).lexically_normal();
  for (const RankEntry& entry : entries) {
    insert.bind(1, std::int64_t{entry.rank}).bind(2, std::string_view(entry.place));
    if (entry.pages_path.empty()) {
      insert.bind_null(3);
    } else {
      const fs::path pages = fs::absolute(entry.pages_path).lexically_normal();
      insert.bind(3, pages.parent_path() == base ? pages.filename().string() : pages.string());
    }
    insert.bind(4, static_cast<std::int64_t>(entry.calls)).bind(5, entry.extent.calls_at_most);
    if (entry.extent.span) {
      insert.bind(6, entry.extent.span->start_ns).bind(7, entry.extent.span->end_ns);
    } else {
      insert.bind_null(6).bind_null(7);
    }
    insert.bind(8, static_cast<std::int64_t>(entry.leaves.pages));
    const std::vector<std::uint8_t> leaves = trace_pages::encode_leaves(entry.leaves);
    sqlite3_bind_blob(insert.get(), 9, leaves.data(), static_cast<int>(leaves.size()), SQLITE_TRANSIENT);
    insert.bind(10, std::int64_t{entry.own_pages ? 1 : 0}).run();
  }
}

std::vector<RankEntry> read_ranks(const SqliteDatabase& db, const std::string& schema,
                                  const std::string& folder) {
  std::vector<RankEntry> entries;
  auto select = db.prepare(fmt::format("SELECT * FROM {}.merge_part_ranks ORDER BY rank", schema));
  while (select.step()) {
    RankEntry& entry = entries.emplace_back();
    entry.rank = static_cast<int>(select.column_int64(0));
    entry.place = select.column_text(1);
    if (!select.column_is_null(2)) {
      const fs::path pages = select.column_text(2);
      entry.pages_path = (pages.is_absolute() ? pages : fs::path(folder) / pages).string();
    }
    entry.calls = static_cast<std::uint64_t>(select.column_int64(3));
    entry.extent.calls_at_most = select.column_int64(4);
    if (!select.column_is_null(5)) {
      entry.extent.span = TileSpan{select.column_int64(5), select.column_int64(6)};
    }
    entry.leaves.pages = static_cast<std::uint64_t>(select.column_int64(7));
    const auto* blob = static_cast<const std::uint8_t*>(sqlite3_column_blob(select.get(), 8));
    auto tables = trace_pages::decode_leaves(
        {blob, static_cast<std::size_t>(sqlite3_column_bytes(select.get(), 8))}, entry.leaves.pages);
    if (!tables) {
      throw SqliteError(fmt::format("{}: rank {}: its leaves are not readable", db.path(), entry.rank));
    }
    entry.leaves.tables = std::move(*tables);
    entry.own_pages = select.column_int64(9) != 0;
  }
  return entries;
}

void write_left_behind(const SqliteDatabase& db, const std::vector<RanksLeftBehind>& left_behind) {
  auto insert = db.prepare("INSERT OR REPLACE INTO merge_part_left_behind VALUES (?,?)");
  for (const RanksLeftBehind& place : left_behind) {
    for (const int rank : place.ranks) {
      insert.bind(1, std::int64_t{rank}).bind(2, std::string_view(place.place)).run();
    }
  }
}

std::vector<RanksLeftBehind> read_left_behind(const SqliteDatabase& db, const std::string& schema) {
  std::vector<RanksLeftBehind> left_behind;
  auto select =
      db.prepare(fmt::format("SELECT rank, place FROM {}.merge_part_left_behind ORDER BY rank", schema));
  while (select.step()) {
    add_left_behind(left_behind, {static_cast<int>(select.column_int64(0))}, select.column_text(1));
  }
  return left_behind;
}

void add_left_behind(std::vector<RanksLeftBehind>& list, const std::vector<int>& ranks,
                     const std::string& place) {
  if (ranks.empty()) {
    return;
  }
  auto same = std::find_if(list.begin(), list.end(),
                           [&](const RanksLeftBehind& entry) { return entry.place == place; });
  if (same == list.end()) {
    same = list.insert(list.end(), RanksLeftBehind{{}, place});
  }
  same->ranks.insert(same->ranks.end(), ranks.begin(), ranks.end());
  std::sort(same->ranks.begin(), same->ranks.end());
}

} // namespace commlens::merge_part
