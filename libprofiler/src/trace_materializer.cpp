#include "trace_materializer.hpp"

#include "commlens/profiler/event_codec.hpp"
#include "commlens/profiler/rank_records.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <tuple>

namespace commlens {

TraceMaterializer::TraceMaterializer(const SqliteDatabase& db, std::string schema, int rank, ClockMap map)
    : db_(db), schema_(std::move(schema)), rank_(rank), map_(map) {}

void TraceMaterializer::load_context() {
  auto rank = db_.prepare(fmt::format(
      "SELECT init_ns, tick_origin, tick_origin_ns, ns_per_tick FROM {}.ranks WHERE rank = ?", schema_));
  rank.bind(1, std::int64_t{rank_});
  if (!rank.step() || rank.column_is_null(3)) {
    throw SqliteError(fmt::format("{}: rank {} has no tick scale in its ranks row", db_.path(), rank_));
  }
  init_ns_ = rank.column_int64(0);
  clock_ = TickConverter(static_cast<std::uint64_t>(rank.column_int64(1)),
                         static_cast<std::uint64_t>(rank.column_int64(2)), rank.column_double(3));

  communicator_ids_.clear();
  auto communicators = db_.prepare(fmt::format(
      "SELECT local_index, id FROM {}.communicators WHERE rank = ? AND local_index IS NOT NULL", schema_));
  communicators.bind(1, std::int64_t{rank_});
  while (communicators.step()) {
    const auto index = static_cast<std::size_t>(communicators.column_int64(0));
    if (index >= communicator_ids_.size()) {
      communicator_ids_.resize(index + 1, -1);
    }
    communicator_ids_[index] = communicators.column_int64(1);
  }

  phases_.clear();
  auto phases = db_.prepare(
      fmt::format("SELECT start_ns, phase FROM {}.phases WHERE rank = ? ORDER BY start_ns", schema_));
  phases.bind(1, std::int64_t{rank_});
  while (phases.step()) {
    phases_.emplace_back(phases.column_int64(0), static_cast<int>(phases.column_int64(1)));
  }

  functions_.clear();
  auto functions = db_.prepare(fmt::format("SELECT id, tag_or_root FROM {}.functions", schema_));
  while (functions.step()) {
    const auto id = static_cast<std::size_t>(functions.column_int64(0));
    if (id >= functions_.size()) {
      functions_.resize(id + 1);
    }
    const auto meaning = static_cast<TagOrRoot>(functions.column_int64(1));
    functions_[id] = FunctionMeaning{meaning == TagOrRoot::Tag, meaning == TagOrRoot::Root};
  }
}

int TraceMaterializer::phase_of(std::int64_t ns) const {
  const auto after =
      std::upper_bound(phases_.begin(), phases_.end(), ns,
                       [](std::int64_t t, const std::pair<std::int64_t, int>& p) { return t < p.first; });
  return after == phases_.begin() ? 0 : std::prev(after)->second;
}

std::int64_t TraceMaterializer::comm_id_of(std::uint32_t index) const {
  return index < communicator_ids_.size() ? communicator_ids_[index] : -1;
}

std::vector<TraceMaterializer::ChunkRef> TraceMaterializer::chunk_order() const {
  // The chunks' order first, without their records (an ORDER BY over the BLOBs would sort them
  // all in memory): the columns before the BLOB are in each row's first page.
  std::vector<ChunkRef> order;
  auto ids = db_.prepare(fmt::format("SELECT thread, id, count FROM {}.trace_chunks", schema_));
  while (ids.step()) {
    order.push_back(
        ChunkRef{static_cast<int>(ids.column_int64(0)), ids.column_int64(1), ids.column_int64(2)});
  }
  std::sort(order.begin(), order.end(), [](const ChunkRef& a, const ChunkRef& b) {
    return std::tie(a.thread, a.id) < std::tie(b.thread, b.id);
  });
  return order;
}

TraceMaterializer::ChunkReader::ChunkReader(const SqliteDatabase& db, const std::string& schema)
    : chunk_(db.prepare(fmt::format("SELECT records FROM {}.trace_chunks WHERE id = ?", schema))) {}

std::span<const std::uint8_t> TraceMaterializer::ChunkReader::read(std::int64_t id) {
  chunk_.reset();
  chunk_.bind(1, id);
  if (!chunk_.step()) {
    return {};
  }
  const auto* data = static_cast<const std::uint8_t*>(sqlite3_column_blob(chunk_.get(), 0));
  return {data, static_cast<std::size_t>(sqlite3_column_bytes(chunk_.get(), 0))};
}

std::uint64_t TraceMaterializer::run(TraceRowSink& out) {
  load_context();
  ChunkReader reader(db_, schema_);
  std::uint64_t records = 0;
  for (const ChunkRef& chunk : chunk_order()) {
    records += store_chunk(out, chunk.thread, reader.read(chunk.id));
  }
  return records;
}

std::int64_t TraceMaterializer::mapped_ns(std::uint64_t ticks) const {
  return map_.apply(static_cast<std::int64_t>(clock_.to_ns(ticks)) - init_ns_);
}

TraceMaterializer::Extent TraceMaterializer::extent() {
  load_context();
  const std::vector<ChunkRef> order = chunk_order();
  ChunkReader reader(db_, schema_);
  // A chunk's first call record, or its last.
  const auto call_in = [&reader](std::int64_t id, bool last) {
    ChunkDecoder decoder(reader.read(id));
    std::optional<EventRecord> found;
    EventRecord record{};
    while (decoder.next(record)) {
      if (record.kind == RecordKind::Call) {
        found = record;
        if (!last) {
          break;
        }
      }
    }
    return found;
  };
  Extent extent;
  std::int64_t records = 0, call_ids = 0;
  std::int64_t latest_last_start = 0;
  for (auto lane_begin = order.begin(); lane_begin != order.end();) {
    const auto lane_end = std::find_if(
        lane_begin, order.end(), [&](const ChunkRef& chunk) { return chunk.thread != lane_begin->thread; });
    for (auto chunk = lane_begin; chunk != lane_end; ++chunk) {
      records += chunk->count;
    }
    std::optional<EventRecord> first, last;
    for (auto chunk = lane_begin; chunk != lane_end && !first; ++chunk) {
      first = call_in(chunk->id, false);
    }
    for (auto chunk = lane_end; chunk != lane_begin && !last;) {
      last = call_in((--chunk)->id, true);
    }
    lane_begin = lane_end;
    if (!first || !last) {
      continue;
    }
    call_ids += static_cast<std::int64_t>(last->call_id - first->call_id) + 1;
    const TileSpan span{mapped_ns(first->start_ticks), mapped_ns(last->end_ticks)};
    const std::int64_t last_start = mapped_ns(last->start_ticks);
    if (!extent.span) {
      extent.span = span;
      latest_last_start = last_start;
      continue;
    }
    extent.span->start_ns = std::min(extent.span->start_ns, span.start_ns);
    if (last_start > latest_last_start) {
      latest_last_start = last_start;
      extent.span->end_ns = span.end_ns;
    }
  }
  extent.calls_at_most = std::min(records, call_ids);
  return extent;
}

std::uint64_t TraceMaterializer::store_chunk(TraceRowSink& out, int thread,
                                             std::span<const std::uint8_t> bytes) {
  const auto relative_ns = [&](std::uint64_t ticks) {
    return static_cast<std::int64_t>(clock_.to_ns(ticks)) - init_ns_;
  };
  const auto known_comm = [](std::int64_t id) { return id >= 0 ? std::optional(id) : std::nullopt; };
  ChunkDecoder decoder(bytes);
  EventRecord record{};
  std::uint64_t records = 0;
  while (decoder.next(record)) {
    ++records;
    const std::int64_t start = relative_ns(record.start_ticks);
    const std::int64_t end = relative_ns(record.end_ticks);
    const std::optional<std::int64_t> comm = known_comm(comm_id_of(record.communicator_index));
    if (record.kind == RecordKind::RequestCompletion) {
      out.add_request(RequestRow{rank_, record.request_id, record.function, map_.apply(start),
                                 map_.apply(end), record.call_id, record.peer, record.bytes_sent,
                                 record.bytes_recv, comm});
      continue;
    }
    const FunctionMeaning meaning =
        record.function < functions_.size() ? functions_[record.function] : FunctionMeaning{};
    const bool has_value = record.tag_or_root != kNoTagOrRoot;
    out.add_call(CallRow{record.call_id, rank_, thread, record.function, map_.apply(start), map_.apply(end),
                         record.bytes_sent, record.bytes_recv, record.peer,
                         meaning.tag && has_value ? std::optional(record.tag_or_root) : std::nullopt, comm,
                         meaning.root && has_value ? std::optional(record.tag_or_root) : std::nullopt,
                         record.request_id != 0 ? std::optional(record.request_id) : std::nullopt,
                         static_cast<int>(record.location), record.implementation, phase_of(start),
                         record.datatype != 0 ? std::optional<int>(record.datatype) : std::nullopt});
  }
  return records;
}

} // namespace commlens
