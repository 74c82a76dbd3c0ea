#include "trace_pages_format.hpp"

#include "sqlite_file.hpp"

#include <fmt/format.h>

#include <cstring>

#include <fcntl.h>

namespace commlens::trace_pages {

using sqlite_pages::Child;

// The leaves BLOB: 64-bit little-endian integers; per table: whether it has rows, its first and
// last rowids, the number of leaves, then each leaf's page and largest rowid.
std::vector<std::uint8_t> encode_leaves(const SqliteBulkLoader::SavedLeaves& leaves) {
  std::vector<std::int64_t> numbers;
  for (const SqliteBulkLoader::SavedTable& table : leaves.tables) {
    numbers.insert(numbers.end(),
                   {table.first_rowid.has_value(), table.first_rowid.value_or(0),
                    table.last_rowid.value_or(0), static_cast<std::int64_t>(table.leaves.size())});
    for (const Child& leaf : table.leaves) {
      numbers.insert(numbers.end(), {std::int64_t{leaf.page}, leaf.max_rowid});
    }
  }
  std::vector<std::uint8_t> bytes(numbers.size() * 8);
  for (std::size_t index = 0; index < numbers.size(); ++index) {
    for (std::size_t byte = 0; byte < 8; ++byte) {
      bytes[index * 8 + byte] =
          static_cast<std::uint8_t>(static_cast<std::uint64_t>(numbers[index]) >> (8 * byte));
    }
  }
  return bytes;
}

std::optional<std::vector<SqliteBulkLoader::SavedTable>> decode_leaves(std::span<const std::uint8_t> bytes,
                                                                       std::uint64_t pages) {
  if (bytes.size() % 8 != 0) {
    return std::nullopt;
  }
  std::size_t next = 0;
  const auto number = [&]() -> std::optional<std::int64_t> {
    if (next + 8 > bytes.size()) {
      return std::nullopt;
    }
    std::uint64_t value = 0;
    for (std::size_t byte = 0; byte < 8; ++byte) {
      value |= std::uint64_t{bytes[next + byte]} << (8 * byte);
    }
    next += 8;
    return static_cast<std::int64_t>(value);
  };
  std::vector<SqliteBulkLoader::SavedTable> tables;
  while (next < bytes.size()) {
    const auto has_rows = number(), first = number(), last = number(), count = number();
    if (!count || *count < 0 || static_cast<std::uint64_t>(*count) > pages) {
      return std::nullopt;
    }
    SqliteBulkLoader::SavedTable table;
    if (*has_rows != 0) {
      table.first_rowid = *first;
      table.last_rowid = *last;
    }
    for (std::int64_t leaf = 0; leaf < *count; ++leaf) {
      const auto page = number(), max_rowid = number();
      if (!max_rowid || *page < 0 || static_cast<std::uint64_t>(*page) >= pages) {
        return std::nullopt;
      }
      table.leaves.push_back(Child{static_cast<std::uint32_t>(*page), *max_rowid});
    }
    if (table.leaves.empty() == table.first_rowid.has_value()) {
      return std::nullopt; // rows without leaves, or leaves without rows
    }
    tables.push_back(std::move(table));
  }
  return tables;
}

std::int64_t last_chunk(const SqliteDatabase& db, const std::string& schema) {
  return db.query_int64(fmt::format("SELECT coalesce(max(id), 0) FROM {}.trace_chunks", schema));
}

void write_record(const SqliteDatabase& db, const Record& record) {
  const std::vector<std::uint8_t> leaves = encode_leaves(record.leaves);
  auto insert = db.prepare("INSERT INTO trace_pages VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
  insert.bind(1, kFormat).bind(2, record.page_size).bind(3, record.usable_size).bind(4, record.map.shift);
  insert.bind(5, record.map.drift).bind(6, record.last_chunk).bind(7, record.extent.calls_at_most);
  if (record.extent.span) {
    insert.bind(8, record.extent.span->start_ns).bind(9, record.extent.span->end_ns);
  } else {
    insert.bind_null(8).bind_null(9);
  }
  insert.bind(10, static_cast<std::int64_t>(record.leaves.pages)).bind(11, record.page_check);
  insert.bind(12, static_cast<std::int64_t>(record.calls));
  sqlite3_bind_blob(insert.get(), 13, leaves.data(), static_cast<int>(leaves.size()), SQLITE_TRANSIENT);
  insert.run();
}

std::optional<Record> read_record(const SqliteDatabase& db, const std::string& schema) {
  if (db.query_int64(
          fmt::format("SELECT count(*) FROM {}.sqlite_master WHERE name = 'trace_pages'", schema)) == 0) {
    return std::nullopt;
  }
  auto query = db.prepare(fmt::format("SELECT * FROM {}.trace_pages", schema));
  if (!query.step() || query.column_int64(0) != kFormat) {
    return std::nullopt;
  }
  Record record;
  record.page_size = query.column_int64(1);
  record.usable_size = query.column_int64(2);
  record.map = ClockMap{query.column_int64(3), query.column_double(4)};
  record.last_chunk = query.column_int64(5);
  record.extent.calls_at_most = query.column_int64(6);
  if (!query.column_is_null(7)) {
    record.extent.span = TileSpan{query.column_int64(7), query.column_int64(8)};
  }
  record.leaves.pages = static_cast<std::uint64_t>(query.column_int64(9));
  record.page_check = query.column_int64(10);
  record.calls = static_cast<std::uint64_t>(query.column_int64(11));
  const auto* blob = static_cast<const std::uint8_t*>(sqlite3_column_blob(query.get(), 12));
  auto tables = decode_leaves({blob, static_cast<std::size_t>(sqlite3_column_bytes(query.get(), 12))},
                              record.leaves.pages);
  if (!tables) {
    return std::nullopt;
  }
  record.leaves.tables = std::move(*tables);
  return record;
}

std::int64_t page_check(const std::string& path, std::uint64_t pages, std::size_t page_size) {
  if (pages == 0) {
    return 0;
  }
  const sqlite_file::File file(path, O_RDONLY);
  std::vector<std::uint8_t> page(page_size);
  std::uint64_t hash = 14695981039346656037ull;
  for (const std::uint64_t index : {std::uint64_t{0}, pages - 1}) {
    file.read_at(page, index * page_size);
    for (const std::uint8_t byte : page) {
      hash = (hash ^ byte) * 1099511628211ull;
    }
  }
  return static_cast<std::int64_t>(hash);
}

} // namespace commlens::trace_pages
