#pragma once
// What the scenarios of p2p_check share: the message data (a hash of seed and position), buffers
// of either kind with unaligned starts, the checks of bytes and statuses, the rank pair.
#include "gpu_job.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace p2p_check {

inline constexpr std::size_t kRendezvousMinBytes = 64 << 10; // runtime/point_to_point/rendezvous_protocol.hpp

std::uint32_t mix(std::uint64_t x);
std::vector<unsigned char> pattern(std::uint64_t seed, std::size_t bytes);

// A buffer of one kind with `offset` bytes of slack in front (unaligned starts).
struct Buffer {
  bool device = false;
  unsigned char* base = nullptr;
  std::size_t offset = 0;
  std::size_t bytes = 0;

  Buffer(bool on_device, std::size_t size, std::size_t start)
      : device(on_device), offset(start), bytes(size) {
    const std::size_t total = size + start + 16;
    if (device) {
      CUDA_CHECK(cudaMalloc(&base, total));
      CUDA_CHECK(cudaMemset(base, 0xEE, total));
    } else {
      base = static_cast<unsigned char*>(std::malloc(total));
      std::memset(base, 0xEE, total);
    }
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
    if (device) {
      cudaFree(base);
    } else {
      std::free(base);
    }
  }
  unsigned char* data() const { return base + offset; }
  void write(const std::vector<unsigned char>& bytes_in) const {
    if (device) {
      CUDA_CHECK(cudaMemcpy(data(), bytes_in.data(), bytes_in.size(), cudaMemcpyHostToDevice));
    } else {
      std::memcpy(data(), bytes_in.data(), bytes_in.size());
    }
  }
  // Everything from the base: the slack and the bytes past the message must be untouched.
  std::vector<unsigned char> read_all() const {
    std::vector<unsigned char> all(bytes + offset + 16);
    if (device) {
      CUDA_CHECK(cudaMemcpy(all.data(), base, all.size(), cudaMemcpyDeviceToHost));
    } else {
      std::memcpy(all.data(), base, all.size());
    }
    return all;
  }
};

struct Checker {
  int rank = 0;
  int failures = 0;
  int rendezvous_sends = 0;
  int rendezvous_receives = 0;

  void fail(const std::string& what) {
    if (failures++ < 20) {
      std::fprintf(stderr, "rank %d: %s\n", rank, what.c_str());
    }
  }
  // The received buffer holds `expected` at its start, 0xEE elsewhere.
  void expect_bytes(const Buffer& buffer, const std::vector<unsigned char>& expected, std::size_t filled,
                    const std::string& what) {
    const std::vector<unsigned char> all = buffer.read_all();
    for (std::size_t i = 0; i < all.size(); ++i) {
      const bool in_message = i >= buffer.offset && i < buffer.offset + filled;
      const unsigned char want = in_message ? expected[i - buffer.offset] : 0xEE;
      if (all[i] != want) {
        fail(what + ": byte " + std::to_string(i) + " differs");
        return;
      }
    }
  }
  void expect_status(const MPI_Status& status, MPI_Datatype type, int count, int source, int tag,
                     const std::string& what) {
    int got = -1;
    MPI_Get_count(&status, type, &got);
    if (got != count || status.MPI_SOURCE != source || status.MPI_TAG != tag) {
      fail(what + ": status count " + std::to_string(got) + " source " + std::to_string(status.MPI_SOURCE) +
           " tag " + std::to_string(status.MPI_TAG) + ", expected " + std::to_string(count) + " " +
           std::to_string(source) + " " + std::to_string(tag));
    }
  }
  void count_rendezvous(bool sender_device, std::size_t bytes, bool sending) {
    if (sender_device && bytes >= kRendezvousMinBytes) {
      ++(sending ? rendezvous_sends : rendezvous_receives);
    }
  }
};

struct Pair {
  int me;
  int partner;
  bool first; // the lower rank of the pair
};

// One message from `from` to `to` of `bytes` bytes (MPI_BYTE), kinds given; both ranks call it.
void one_message(Checker& check, const Pair& pair, bool i_send, bool send_device, bool recv_device,
                 std::size_t bytes, std::size_t offset, std::uint64_t seed, int tag);
// Both ranks of the pair are here.
void pair_barrier(const Pair& pair);

// The scenarios, in the order of the list at the top of main.cpp (each both ranks of a pair call).
void blocking_messages(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed);
void nonblocking_exchanges(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed);
void wildcards_and_order(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed);
void sendrecv_exchanges(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed);
void strided_messages(Checker& check, const Pair& pair, std::uint64_t seed);
// returning: a communicator with MPI_ERRORS_RETURN.
void truncation(Checker& check, const Pair& pair, MPI_Comm returning, std::uint64_t seed);
void send_while_receiver_in_barrier(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed);
void freed_send_request(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed);
void probed_receives(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed);
void persistent_receive(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed);
void stress(Checker& check, const Pair& pair, int calls, std::size_t large, std::uint64_t seed);
void waiting_receiver(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed);
void send_modes(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed);
void persistent_sends(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed);

} // namespace p2p_check
