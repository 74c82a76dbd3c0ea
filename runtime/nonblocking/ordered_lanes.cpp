#include "nonblocking/ordered_lanes.hpp"

namespace commlens::runtime::nonblocking {

OrderedLanes::~OrderedLanes() {
  std::unique_lock lock(mutex_);
  for (auto& [key, lane] : lanes_) {
    stop(*lane, lock);
  }
}

Ticket OrderedLanes::post(LaneKey key, Job job) {
  std::lock_guard lock(mutex_);
  const Ticket ticket = next_ticket_++;
  std::unique_ptr<Lane>& lane = lanes_[key];
  if (!lane) {
    lane = std::make_unique<Lane>();
    lane->worker = std::thread([this, raw = lane.get()] { run_lane(*raw); });
  }
  lane->queue.emplace_back(ticket, std::move(job));
  lane->last_posted = ticket;
  outcomes_.emplace(ticket, std::nullopt);
  lane->work.notify_one();
  return ticket;
}

void OrderedLanes::run_lane(Lane& lane) {
  std::unique_lock lock(mutex_);
  while (true) {
    lane.work.wait(lock, [&] { return lane.stopping || !lane.queue.empty(); });
    if (lane.queue.empty()) {
      return; // stopping, and every queued job ran
    }
    auto [ticket, job] = std::move(lane.queue.front());
    lane.queue.pop_front();
    lock.unlock();
    Outcome outcome = job(); // outside the lock: jobs wait for other ranks
    lock.lock();
    outcomes_[ticket] = std::move(outcome);
    lane.last_ran = ticket;
    ran_.notify_all();
  }
}

std::optional<Outcome> OrderedLanes::poll(Ticket ticket) const {
  std::lock_guard lock(mutex_);
  const auto found = outcomes_.find(ticket);
  return found == outcomes_.end() ? std::nullopt : found->second;
}

Outcome OrderedLanes::wait(Ticket ticket) const {
  std::unique_lock lock(mutex_);
  const auto found = outcomes_.find(ticket);
  if (found == outcomes_.end()) {
    return {};
  }
  ran_.wait(lock, [&] { return found->second.has_value(); }); // map nodes stay put
  return *found->second;
}

void OrderedLanes::drain(LaneKey key) const {
  std::unique_lock lock(mutex_);
  const auto found = lanes_.find(key);
  if (found == lanes_.end()) {
    return;
  }
  const Lane& lane = *found->second;
  const Ticket last = lane.last_posted;
  ran_.wait(lock, [&] { return lane.last_ran >= last; });
}

void OrderedLanes::retire(Ticket ticket) {
  std::lock_guard lock(mutex_);
  outcomes_.erase(ticket);
}

void OrderedLanes::close(LaneKey key) {
  std::unique_lock lock(mutex_);
  const auto found = lanes_.find(key);
  if (found == lanes_.end()) {
    return;
  }
  std::unique_ptr<Lane> lane = std::move(found->second);
  lanes_.erase(found);
  stop(*lane, lock);
}

void OrderedLanes::stop(Lane& lane, std::unique_lock<std::mutex>& lock) {
  lane.stopping = true;
  lane.work.notify_one();
  lock.unlock();
  lane.worker.join();
  lock.lock();
}

std::size_t OrderedLanes::outstanding() const {
  std::lock_guard lock(mutex_);
  return outcomes_.size();
}

} // namespace commlens::runtime::nonblocking
