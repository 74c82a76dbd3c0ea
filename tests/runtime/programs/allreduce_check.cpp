// MPI_Allreduce on device buffers, checked against a host reference: every predefined op on every
// integer, floating-point and C_BOOL type the GPU runtime reduces, counts from 1 element to 1 GiB,
// unaligned offsets, MPI_IN_PLACE, freshly allocated buffers each round, and a stress run of
// random calls. Inputs are a hash of (seed, rank, call, index), so every rank computes the
// reference for every rank's data itself; the seed is fresh each run.
// 16-bit floats (half, bfloat16), which MPI has no type for, go through a 2-byte datatype named
// with the runtime's hint ("commlens:float16:sum", ...) and a user-defined op doing the same on
// the host (what MPI, and so the baseline, runs).
// Usage: allreduce_check STRESS_CALLS [LARGE_ELEMENTS]
// Besides the checked calls it makes exactly 6 calls the runtime must hand to the baseline: host
// buffers, a user-defined op, MPI_MINLOC on MPI_2INT, managed memory, a host send buffer with a
// device receive buffer, an inter-communicator. Each rank prints "runtime_eligible E fallback 6";
// rank 0 prints "allreduce_check: ok" when every result matched
// (integers bitwise, floats within reordering tolerance). Rank r uses GPU r modulo the GPU count.
#include "gpu_job.hpp"
#include "reduction_reference.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

using commlens::reference::combine;
using commlens::reference::kAllOps;
using commlens::reference::mix;
using commlens::reference::mpi_op;
using commlens::reference::Op;

// 16-bit floats as their bits on the host; arithmetic in float, rounded back after every step,
// as the GPU's __half / __nv_bfloat16 operators do.
enum class Half { Float16, BFloat16 };

float to_float(Half kind, std::uint16_t bits) {
  if (kind == Half::Float16) {
    __half_raw raw;
    raw.x = bits;
    return __half2float(__half(raw));
  }
  __nv_bfloat16_raw raw;
  raw.x = bits;
  return __bfloat162float(__nv_bfloat16(raw));
}

std::uint16_t from_float(Half kind, float value) {
  if (kind == Half::Float16) {
    return static_cast<__half_raw>(__float2half(value)).x;
  }
  return static_cast<__nv_bfloat16_raw>(__float2bfloat16(value)).x;
}

template <Half Kind, Op Operation> void half_op(void* in, void* inout, int* length, MPI_Datatype*) {
  const auto* a = static_cast<const std::uint16_t*>(in);
  auto* b = static_cast<std::uint16_t*>(inout);
  for (int i = 0; i < *length; ++i)
    b[i] = from_float(Kind, combine(Operation, to_float(Kind, a[i]), to_float(Kind, b[i])));
}

// The hinted datatype and the host op of one (kind, op); made once, kept for the run.
struct HalfReduction {
  MPI_Datatype type;
  MPI_Op op;
};

template <Half Kind, Op Operation> HalfReduction half_reduction(const char* name) {
  static HalfReduction made = [name] {
    HalfReduction r{};
    MPI_Type_contiguous(2, MPI_BYTE, &r.type);
    MPI_Type_set_name(r.type, name);
    MPI_Type_commit(&r.type);
    MPI_Op_create(half_op<Kind, Operation>, 1, &r.op);
    return r;
  }();
  return made;
}

struct Checker {
  int rank, size;
  std::uint64_t seed;
  long call = 0;     // calls made so far (all ranks agree)
  long eligible = 0; // calls on device buffers with a predefined op and type the runtime takes
  long failures = 0;

  template <typename T> T value(int owner, std::size_t index, Op op, bool boolean) const {
    const std::uint64_t h = mix(seed ^ mix(static_cast<std::uint64_t>(call) * 131 + owner) ^ mix(index));
    if (boolean)
      return T(h % 2);
    if constexpr (std::is_floating_point_v<T>)
      return T(0.5 + double(h % 1000000) / 1e6);
    if (op == Op::Band || op == Op::Bor || op == Op::Bxor)
      return T(h);
    return std::is_signed_v<T> ? T(int(h % 7) - 3) : T(h % 7);
  }

  bool close(double got, double want, bool floating) const {
    return floating ? std::fabs(got - want) <= 1e-5 * std::fabs(want) + 1e-30 : got == want;
  }

  // MPI_Allreduce of `mine` (count elements from element `offset`) through freshly allocated
  // device buffers, the output poisoned first so that unwritten elements show; returns the output
  // as it came back. A failing call is reported and counted.
  template <typename T>
  std::vector<T> allreduce_on_device(const std::vector<T>& mine, std::size_t count, std::size_t offset,
                                     bool in_place, MPI_Datatype type, MPI_Op mpi_operation, Op op) {
    const std::size_t bytes = mine.size() * sizeof(T);
    std::vector<T> result(mine.size());
    T *send = nullptr, *recv = nullptr;
    CUDA_CHECK(cudaMalloc(&send, bytes));
    CUDA_CHECK(cudaMalloc(&recv, bytes));
    CUDA_CHECK(cudaMemcpy(in_place ? recv : send, mine.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(in_place ? send : recv, 0xA5, bytes));
    const int rc = MPI_Allreduce(in_place ? MPI_IN_PLACE : static_cast<void*>(send + offset), recv + offset,
                                 static_cast<int>(count), type, mpi_operation, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
      char text[MPI_MAX_ERROR_STRING];
      int length = 0;
      MPI_Error_string(rc, text, &length);
      std::fprintf(stderr, "rank %d call %ld: op %d size %zu count %zu: MPI_Allreduce failed: %s\n", rank,
                   call, static_cast<int>(op), sizeof(T), count, text);
      ++failures;
    }
    CUDA_CHECK(cudaMemcpy(result.data(), recv, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(send));
    CUDA_CHECK(cudaFree(recv));
    return result;
  }

  // One checked call: count elements at element offset `offset` of fresh device buffers, this
  // rank's element i being mine(i) and the result's want(i).
  template <typename T, typename Mine, typename Want>
  void run_checked(MPI_Datatype type, Op op, std::size_t count, std::size_t offset, bool in_place, Mine mine,
                   Want want) {
    std::vector<T> input(count + offset);
    for (std::size_t i = 0; i < count; ++i)
      input[offset + i] = mine(i);
    const std::vector<T> result = allreduce_on_device(input, count, offset, in_place, type, mpi_op(op), op);
    for (std::size_t i = 0; i < count; ++i) {
      const T wanted = want(i);
      if (!close(double(result[offset + i]), double(wanted), std::is_floating_point_v<T>)) {
        if (failures++ < 10)
          std::fprintf(stderr,
                       "rank %d call %ld: op %d count %zu offset %zu in_place %d: [%zu] = %g, want %g\n",
                       rank, call, static_cast<int>(op), count, offset, in_place, i,
                       double(result[offset + i]), double(wanted));
        break;
      }
    }
    ++call;
    ++eligible;
  }

  // One checked call on hashed inputs: every rank computes every rank's elements for the reference.
  template <typename T>
  void run(MPI_Datatype type, Op op, std::size_t count, std::size_t offset, bool in_place,
           bool boolean = false) {
    run_checked<T>(
        type, op, count, offset, in_place, [&](std::size_t i) { return value<T>(rank, i, op, boolean); },
        [&](std::size_t i) {
          T want = value<T>(0, i, op, boolean);
          for (int r = 1; r < size; ++r)
            want = combine(op, want, value<T>(r, i, op, boolean));
          return want;
        });
  }

  // The largest call: exactly 1 GiB (2^28 int32 sums), in place, one element past the allocation's
  // start. Element i of rank r is (r + 1) * ((i ^ seed) % 13), so the reference costs one pass
  // instead of a hash per rank and element (seconds at this size).
  void run_one_gib() {
    const auto pattern = [this](std::size_t i) { return static_cast<std::int32_t>((i ^ seed) % 13); };
    const std::int32_t ranks_sum = size * (size + 1) / 2;
    run_checked<std::int32_t>(
        MPI_INT32_T, Op::Sum, std::size_t{1} << 28, 1, true,
        [&](std::size_t i) { return (rank + 1) * pattern(i); },
        [&](std::size_t i) { return ranks_sum * pattern(i); });
  }

  // One checked call on 16-bit floats through their hinted datatype and host op.
  void run_half(Half kind, HalfReduction reduction, Op op, std::size_t count, std::size_t offset,
                bool in_place) {
    std::vector<std::uint16_t> mine(count + offset);
    const auto input = [&](int owner, std::size_t i) {
      return to_float(kind, from_float(kind, value<float>(owner, i, op, false)));
    };
    for (std::size_t i = 0; i < count; ++i)
      mine[offset + i] = from_float(kind, input(rank, i));
    const std::vector<std::uint16_t> result =
        allreduce_on_device(mine, count, offset, in_place, reduction.type, reduction.op, op);
    // Rounding at every step makes the result depend on the reduction order, which MPI and the
    // runtime choose differently: a tolerance of a few units in the last place of the sum.
    const float tolerance = kind == Half::Float16 ? 1e-2f : 5e-2f;
    for (std::size_t i = 0; i < count; ++i) {
      float want = input(0, i);
      for (int r = 1; r < size; ++r)
        want = to_float(kind, from_float(kind, combine(op, want, input(r, i))));
      const float got = to_float(kind, result[offset + i]);
      if (!(std::fabs(got - want) <= tolerance * std::fabs(want))) {
        if (failures++ < 10)
          std::fprintf(stderr,
                       "rank %d call %ld: %s op %d count %zu offset %zu in_place %d: [%zu] = %g, want %g\n",
                       rank, call, kind == Half::Float16 ? "float16" : "bfloat16", static_cast<int>(op),
                       count, offset, in_place, i, double(got), double(want));
        break;
      }
    }
    ++call;
    ++eligible;
  }

  template <Half Kind> void every_half_shape(const char* kind_name, std::size_t large) {
    const std::string prefix = std::string("commlens:") + kind_name + ":";
    const HalfReduction reductions[] = {half_reduction<Kind, Op::Sum>((prefix + "sum").c_str()),
                                        half_reduction<Kind, Op::Prod>((prefix + "prod").c_str()),
                                        half_reduction<Kind, Op::Min>((prefix + "min").c_str()),
                                        half_reduction<Kind, Op::Max>((prefix + "max").c_str())};
    for (const Op op : {Op::Sum, Op::Prod, Op::Min, Op::Max}) {
      for (const std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{4099}}) {
        run_half(Kind, reductions[static_cast<int>(op)], op, count, 0, false);
        run_half(Kind, reductions[static_cast<int>(op)], op, count, 1, false);
        run_half(Kind, reductions[static_cast<int>(op)], op, count, 0, true);
      }
    }
    run_half(Kind, reductions[0], Op::Sum, large, 0, false);
  }

  template <typename T>
  void every_op(MPI_Datatype type, std::size_t count, std::size_t offset, bool in_place) {
    for (const Op op : kAllOps) {
      const bool bitwise = op == Op::Band || op == Op::Bor || op == Op::Bxor;
      const bool logical = op == Op::Land || op == Op::Lor || op == Op::Lxor;
      if (std::is_floating_point_v<T> && (bitwise || logical))
        continue; // MPI defines neither on floating-point types
      run<T>(type, op, count, offset, in_place);
    }
  }

  template <typename T> void every_shape(MPI_Datatype type) {
    for (const std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{4099}}) {
      every_op<T>(type, count, 0, false);
      every_op<T>(type, count, 1, false); // unaligned: one element past the allocation's start
      every_op<T>(type, count, 0, true);
    }
  }
};

void user_sum(void* in, void* inout, int* length, MPI_Datatype*) {
  for (int i = 0; i < *length; ++i)
    static_cast<int*>(inout)[i] += static_cast<int*>(in)[i];
}

// The six calls the runtime must decline; each result is checked too.
void fallback_calls(Checker& check) {
  const int n = 1000;
  std::vector<int> host_in(n, check.rank + 1), host_out(n);
  MPI_Allreduce(host_in.data(), host_out.data(), n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  const int sum = check.size * (check.size + 1) / 2;
  check.failures += host_out[n - 1] != sum;

  int *device_in = nullptr, *device_out = nullptr;
  CUDA_CHECK(cudaMalloc(&device_in, 2 * n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&device_out, 2 * n * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(device_in, host_in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  MPI_Op op;
  MPI_Op_create(user_sum, 1, &op);
  MPI_Allreduce(device_in, device_out, n, MPI_INT, op, MPI_COMM_WORLD);
  MPI_Op_free(&op);
  CUDA_CHECK(cudaMemcpy(host_out.data(), device_out, n * sizeof(int), cudaMemcpyDeviceToHost));
  check.failures += host_out[0] != sum;

  std::vector<int> pairs(2 * n);
  for (int i = 0; i < n; ++i)
    pairs[2 * i] = (check.rank * 7 + i) % check.size, pairs[2 * i + 1] = check.rank;
  CUDA_CHECK(cudaMemcpy(device_in, pairs.data(), 2 * n * sizeof(int), cudaMemcpyHostToDevice));
  MPI_Allreduce(device_in, device_out, n, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
  CUDA_CHECK(cudaMemcpy(pairs.data(), device_out, 2 * n * sizeof(int), cudaMemcpyDeviceToHost));
  check.failures += pairs[0] != 0;
  CUDA_CHECK(cudaFree(device_in));
  CUDA_CHECK(cudaFree(device_out));

  int* managed = nullptr;
  CUDA_CHECK(cudaMallocManaged(&managed, n * sizeof(int)));
  for (int i = 0; i < n; ++i)
    managed[i] = check.rank + 1;
  MPI_Allreduce(MPI_IN_PLACE, managed, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  check.failures += managed[n - 1] != sum;
  CUDA_CHECK(cudaFree(managed));

  // A host send buffer into a device receive buffer: the runtime needs both on the device.
  CUDA_CHECK(cudaMalloc(&device_in, n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&device_out, n * sizeof(int)));
  CUDA_CHECK(cudaMemset(device_out, 0, n * sizeof(int)));
  MPI_Allreduce(host_in.data(), device_out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CUDA_CHECK(cudaMemcpy(host_out.data(), device_out, n * sizeof(int), cudaMemcpyDeviceToHost));
  check.failures += host_out[n - 1] != sum;

  // Even ranks against odd ranks through an inter-communicator: each side gets the other's sum.
  MPI_Comm half = MPI_COMM_NULL;
  MPI_Comm inter = MPI_COMM_NULL;
  const int side = check.rank % 2;
  MPI_Comm_split(MPI_COMM_WORLD, side, check.rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - side, 99, &inter);
  CUDA_CHECK(cudaMemcpy(device_in, host_in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  MPI_Allreduce(device_in, device_out, n, MPI_INT, MPI_SUM, inter);
  CUDA_CHECK(cudaMemcpy(host_out.data(), device_out, n * sizeof(int), cudaMemcpyDeviceToHost));
  int other_side = 0;
  for (int rank = 1 - side; rank < check.size; rank += 2)
    other_side += rank + 1;
  check.failures += host_out[n - 1] != other_side;
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
  CUDA_CHECK(cudaFree(device_in));
  CUDA_CHECK(cudaFree(device_out));
  check.call += 6;
}

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Checker check{};
  MPI_Comm_rank(MPI_COMM_WORLD, &check.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &check.size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); // a failing call is reported, not fatal
  const long stress_calls = argc > 1 ? std::atol(argv[1]) : 200;
  const std::size_t large = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : (std::size_t{1} << 22) + 3;
  int devices = 0;
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  CUDA_CHECK(cudaSetDevice(check.rank % devices));
  check.seed = static_cast<std::uint64_t>(std::time(nullptr)) * 2654435761u;
  MPI_Bcast(&check.seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);

  check.every_shape<std::int8_t>(MPI_SIGNED_CHAR);
  check.every_shape<std::uint8_t>(MPI_UNSIGNED_CHAR);
  check.every_shape<std::int16_t>(MPI_SHORT);
  check.every_shape<std::uint16_t>(MPI_UNSIGNED_SHORT);
  check.every_shape<std::int32_t>(MPI_INT);
  check.every_shape<std::uint32_t>(MPI_UNSIGNED);
  check.every_shape<std::int64_t>(MPI_LONG);
  check.every_shape<std::uint64_t>(MPI_UNSIGNED_LONG);
  check.every_shape<std::int64_t>(MPI_INT64_T);
  check.every_shape<float>(MPI_FLOAT);
  check.every_shape<double>(MPI_DOUBLE);
  for (const Op op : {Op::Land, Op::Lor, Op::Lxor}) {
    check.run<std::uint8_t>(MPI_C_BOOL, op, 4099, 0, false, true);
  }
  check.every_half_shape<Half::Float16>("float16", large);
  check.every_half_shape<Half::BFloat16>("bfloat16", large);
  // Large: vectorised slices, both placements.
  check.run<float>(MPI_FLOAT, Op::Sum, large, 0, false);
  check.run<float>(MPI_FLOAT, Op::Sum, large, 0, true);
  check.run<double>(MPI_DOUBLE, Op::Max, large / 2, 1, false);
  check.run<std::int32_t>(MPI_INT, Op::Bxor, large, 0, true);
  // Striped (two ranks, 256 MiB and up, not in place): NVLink and the host path share the data.
  check.run<float>(MPI_FLOAT, Op::Sum, std::size_t{64} << 20, 0, false);
  check.run<double>(MPI_DOUBLE, Op::Min, (std::size_t{32} << 20) + 5, 1, false);
  check.run_one_gib();
  // Stress: random ops, types and sizes; every buffer is new, so freed-and-reallocated addresses
  // are met again and again (a stale IPC mapping would return the old data).
  for (long i = 0; i < stress_calls; ++i) {
    const std::uint64_t h = mix(check.seed + 7919 * static_cast<std::uint64_t>(i));
    const std::size_t count = 1 + h % 70000;
    const bool in_place = (h >> 20) % 2;
    const Op op = kAllOps[(h >> 24) % 4]; // sum, prod, min, max: defined for every numeric type
    switch ((h >> 32) % 3) {
    case 0:
      check.run<float>(MPI_FLOAT, op, count, 0, in_place);
      break;
    case 1:
      check.run<std::int64_t>(MPI_LONG, op, count, 0, in_place);
      break;
    default:
      check.run<std::uint16_t>(MPI_UNSIGNED_SHORT, op, count, (h >> 40) % 3, in_place);
      break;
    }
  }
  fallback_calls(check);

  std::printf("rank %d: runtime_eligible %ld fallback 6 failures %ld\n", check.rank, check.eligible,
              check.failures);
  long failures = 0;
  MPI_Reduce(&check.failures, &failures, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (check.rank == 0)
    std::printf("allreduce_check: %s (%ld failures)\n", failures == 0 ? "ok" : "FAILED", failures);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
