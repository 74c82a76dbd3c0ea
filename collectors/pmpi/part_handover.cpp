#include "part_handover.hpp"

#include <cstring>
#include <stdexcept>

namespace commlens::pmpi {

namespace {

class Writer {
public:
  void number(std::int64_t value) {
    const std::size_t at = bytes_.size();
    bytes_.resize(at + sizeof value);
    std::memcpy(&bytes_[at], &value, sizeof value);
  }
  void text(const std::string& value) {
    number(static_cast<std::int64_t>(value.size()));
    bytes_.insert(bytes_.end(), value.begin(), value.end());
  }
  void places(const std::vector<RanksLeftBehind>& list) {
    number(static_cast<std::int64_t>(list.size()));
    for (const RanksLeftBehind& place : list) {
      text(place.place);
      number(static_cast<std::int64_t>(place.ranks.size()));
      for (const int rank : place.ranks) {
        number(rank);
      }
    }
  }
  std::vector<std::uint8_t> take() { return std::move(bytes_); }

private:
  std::vector<std::uint8_t> bytes_;
};

class Reader {
public:
  explicit Reader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  std::int64_t number() {
    std::int64_t value = 0;
    need(sizeof value);
    std::memcpy(&value, &bytes_[at_], sizeof value);
    at_ += sizeof value;
    return value;
  }
  std::size_t count() {
    const std::int64_t value = number();
    if (value < 0 || static_cast<std::size_t>(value) > bytes_.size()) {
      throw std::runtime_error("a part's handover message is damaged");
    }
    return static_cast<std::size_t>(value);
  }
  std::string text() {
    const std::size_t size = count();
    need(size);
    std::string value(reinterpret_cast<const char*>(&bytes_[at_]), size);
    at_ += size;
    return value;
  }
  std::vector<RanksLeftBehind> places() {
    std::vector<RanksLeftBehind> list(count());
    for (RanksLeftBehind& place : list) {
      place.place = text();
      place.ranks.resize(count());
      for (int& rank : place.ranks) {
        rank = static_cast<int>(number());
      }
    }
    return list;
  }

private:
  void need(std::size_t size) const {
    if (at_ + size > bytes_.size()) {
      throw std::runtime_error("a part's handover message is cut short");
    }
  }
  std::span<const std::uint8_t> bytes_;
  std::size_t at_ = 0;
};

} // namespace

std::vector<std::uint8_t> encode_handover(const PartHandover& handover) {
  Writer out;
  out.number(handover.made ? 1 : 0);
  out.number(handover.in_place ? 1 : 0);
  out.number(static_cast<std::int64_t>(handover.files.size()));
  for (std::size_t file = 0; file < handover.files.size(); ++file) {
    out.text(handover.files[file]);
    out.number(static_cast<std::int64_t>(handover.sizes[file]));
  }
  out.places(handover.ranks);
  out.places(handover.remote);
  return out.take();
}

PartHandover decode_handover(std::span<const std::uint8_t> bytes) {
  Reader in(bytes);
  PartHandover handover;
  handover.made = in.number() != 0;
  handover.in_place = in.number() != 0;
  handover.files.resize(in.count());
  for (std::string& file : handover.files) {
    file = in.text();
    handover.sizes.push_back(static_cast<std::uint64_t>(in.number()));
  }
  handover.ranks = in.places();
  handover.remote = in.places();
  return handover;
}

} // namespace commlens::pmpi
