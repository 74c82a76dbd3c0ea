// MPI_Allgather, MPI_Gather, MPI_Scatter, MPI_Alltoall, MPI_Reduce_scatter_block and
// MPI_Reduce_scatter on device buffers, checked byte for byte against a host reference: every
// predefined type the runtime copies (and, for the reductions, every type with MPI_SUM, MPI_PROD,
// MPI_MIN, MPI_MAX and the bitwise and logical ops of the integers), every root, in place where MPI
// allows it, odd counts from 1 to 2^20+3 elements, MPI_COMM_WORLD and sub-communicators (split by
// parity, reversed), repeated calls on the same buffers and on buffers freed and allocated again.
// Inputs are a hash of (seed, call, rank, index), so every rank computes every rank's data itself;
// reductions use small integers so that every order of the sum gives the same bits.
// Copied types are those whose size is their extent (MPI_DOUBLE_INT has a gap: a gapped type is
// the non-contiguous case below). Besides the checked runtime calls it makes calls the runtime must
// hand to the baseline (host buffers, a host buffer on one rank only, a non-contiguous datatype,
// in-place alltoall and reduce_scatter_block, an empty call); they are checked too.
// Each rank prints "rank R: runtime_eligible E baseline_only B failures F" (E: calls the runtime
// must run with COMMLENS_RUNTIME=on, B: calls it must hand to the baseline); rank 0 prints
// "data_movement_check: ok" when every result matched, or "data_movement_check: skipped" without
// a GPU. Rank r uses GPU r modulo the GPU count. Usage: data_movement_check [LARGEST_COUNT]
// checker.hpp: the buffers, types, reference arithmetic and the checks; copies.cpp and
// reductions.cpp: the calls; main.cpp: what runs on which communicator.
#pragma once
#include "gpu_job.hpp"
#include "host_or_device_memory.hpp"
#include "reduction_reference.hpp"

#include <algorithm>
#include <type_traits>

#include <cstdint>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace data_movement_check {

using commlens::reference::combine;
using commlens::reference::mix;
using commlens::reference::mpi_op;
using commlens::reference::Op;

// A device buffer with its host image; `host` lays the buffer in host memory instead.
struct Buffer {
  std::vector<unsigned char> image;
  HostOrDeviceMemory memory;
  void* data;

  Buffer(std::size_t bytes, bool in_host) : image(bytes), memory(bytes + 1, in_host), data(memory.data()) {}
  void upload() { CUDA_CHECK(cudaMemcpy(data, image.data(), image.size(), cudaMemcpyDefault)); }
  std::vector<unsigned char> download() const {
    std::vector<unsigned char> bytes(image.size());
    CUDA_CHECK(cudaMemcpy(bytes.data(), data, bytes.size(), cudaMemcpyDefault));
    return bytes;
  }
};

struct Type {
  MPI_Datatype type;
  const char* name;
  std::size_t bytes;
};

inline const Type kCopyTypes[] = {
    {MPI_CHAR, "MPI_CHAR", 1},
    {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 1},
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1},
    {MPI_BYTE, "MPI_BYTE", 1},
    {MPI_SHORT, "MPI_SHORT", 2},
    {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", 2},
    {MPI_INT, "MPI_INT", 4},
    {MPI_UNSIGNED, "MPI_UNSIGNED", 4},
    {MPI_LONG, "MPI_LONG", sizeof(long)},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", sizeof(long)},
    {MPI_LONG_LONG, "MPI_LONG_LONG", 8},
    {MPI_FLOAT, "MPI_FLOAT", 4},
    {MPI_DOUBLE, "MPI_DOUBLE", 8},
    {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", sizeof(long double)},
    {MPI_C_BOOL, "MPI_C_BOOL", 1},
    {MPI_INT8_T, "MPI_INT8_T", 1},
    {MPI_UINT16_T, "MPI_UINT16_T", 2},
    {MPI_INT32_T, "MPI_INT32_T", 4},
    {MPI_UINT64_T, "MPI_UINT64_T", 8},
    {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", 8},
    {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 16},
    {MPI_2INT, "MPI_2INT", 8},
};

class Checker {
public:
  Checker(MPI_Comm comm, std::uint64_t seed, long* eligible, long* baseline_only, long* failures)
      : comm_(comm), seed_(seed), eligible_(eligible), baseline_only_(baseline_only), failures_(failures) {
    MPI_Comm_rank(comm, &rank_);
    MPI_Comm_size(comm, &size_);
  }

  // Rank `owner`'s input byte i of the current call.
  unsigned char byte(int owner, std::size_t i) const {
    return static_cast<unsigned char>(
        mix(seed_ ^ (call_ << 40) ^ (static_cast<std::uint64_t>(owner) << 32) ^ i));
  }
  void fill(Buffer& buffer, int owner, std::size_t offset = 0, std::size_t bytes = SIZE_MAX) {
    bytes = std::min(bytes, buffer.image.size() - offset);
    for (std::size_t i = 0; i < bytes; ++i) {
      buffer.image[offset + i] = byte(owner, i);
    }
  }
  void expect(const Buffer& buffer, const std::vector<unsigned char>& expected, std::size_t bytes,
              const std::string& what) {
    const std::vector<unsigned char> got = buffer.download();
    if (bytes > 0 && std::memcmp(got.data(), expected.data(), bytes) != 0) {
      ++*failures_;
      std::size_t first = 0;
      while (got[first] == expected[first]) {
        ++first;
      }
      std::fprintf(stderr, "MISMATCH rank %d: %s: byte %zu of %zu is %u, expected %u\n", rank_, what.c_str(),
                   first, bytes, got[first], expected[first]);
    }
  }
  // A call the runtime must run (device buffers everywhere, a communicator it serves), or not.
  void counted(bool runtime) { ++*(runtime && size_ >= 2 ? eligible_ : baseline_only_); }
  void check(int rc, const std::string& what) {
    if (rc != MPI_SUCCESS) {
      ++*failures_;
      std::fprintf(stderr, "MISMATCH rank %d: %s returned %d\n", rank_, what.c_str(), rc);
    }
  }
  std::string describe(const char* function, const Type& type, std::size_t count, bool in_place,
                       int root = -1) {
    return std::string(function) + " " + type.name + " count " + std::to_string(count) +
           (in_place ? " in place" : "") + (root >= 0 ? " root " + std::to_string(root) : "") + " on " +
           std::to_string(size_) + " ranks";
  }

  // Placement::MixedHost: rank 0's buffers in host memory, the others' on the device.
  enum class Placement { Device, Host, MixedHost };
  void allgather(const Type& type, std::size_t count, bool in_place, Placement placement = Placement::Device,
                 int repeats = 1);
  void gather(const Type& type, std::size_t count, int root, bool in_place);
  void scatter(const Type& type, std::size_t count, int root, bool in_place);
  void alltoall(const Type& type, std::size_t count, bool in_place = false, int repeats = 1);
  template <typename T>
  void reduce_scatter(MPI_Datatype type, Op op, std::size_t count, bool blocks, bool in_place);
  // A gather whose senders pass a strided (non-contiguous) datatype: every rank to the baseline.
  void non_contiguous_gather(std::size_t count);

  int rank() const { return rank_; }
  int size() const { return size_; }

private:
  MPI_Comm comm_;
  std::uint64_t seed_;
  std::uint64_t call_ = 0;
  int rank_ = 0;
  int size_ = 1;
  long* eligible_;
  long* baseline_only_;
  long* failures_;
};

} // namespace data_movement_check

namespace data_movement_check {
// reductions.cpp: every type with every op it has, as reduce_scatter_block (blocks) or
// reduce_scatter with unequal counts.
void every_reduction(Checker& check, std::size_t count, bool blocks);
} // namespace data_movement_check
