// The copying collectives of data_movement_check (checker.hpp).
#include "checker.hpp"

namespace data_movement_check {

void Checker::allgather(const Type& type, std::size_t count, bool in_place, Placement placement,
                        int repeats) {
  const bool host = placement == Placement::Host || (placement == Placement::MixedHost && rank_ == 0);
  const std::size_t block = count * type.bytes;
  Buffer send(block, host);
  Buffer receive(block * static_cast<std::size_t>(size_), host);
  for (int repeat = 0; repeat < repeats; ++repeat) {
    ++call_;
    fill(send, rank_);
    std::fill(receive.image.begin(), receive.image.end(), 0xEE);
    if (in_place) {
      fill(receive, rank_, block * static_cast<std::size_t>(rank_), block);
    }
    send.upload();
    receive.upload();
    const std::string what = describe("MPI_Allgather", type, count, in_place);
    check(MPI_Allgather(in_place ? MPI_IN_PLACE : send.data, static_cast<int>(count), type.type, receive.data,
                        static_cast<int>(count), type.type, comm_),
          what);
    std::vector<unsigned char> expected(receive.image.size());
    for (int source = 0; source < size_; ++source) {
      for (std::size_t i = 0; i < block; ++i) {
        expected[block * static_cast<std::size_t>(source) + i] = byte(source, i);
      }
    }
    expect(receive, expected, expected.size(), what);
    counted(placement == Placement::Device && count > 0);
  }
}

void Checker::gather(const Type& type, std::size_t count, int root, bool in_place) {
  ++call_;
  const std::size_t block = count * type.bytes;
  const bool is_root = rank_ == root;
  Buffer send(block, false);
  Buffer receive(is_root ? block * static_cast<std::size_t>(size_) : 0, false);
  fill(send, rank_);
  send.upload();
  if (is_root && in_place) {
    fill(receive, rank_, block * static_cast<std::size_t>(rank_), block);
    receive.upload();
  }
  const std::string what = describe("MPI_Gather", type, count, in_place && is_root, root);
  // Receive arguments are not significant off the root: a null buffer there must not be touched.
  check(MPI_Gather(is_root && in_place ? MPI_IN_PLACE : send.data, static_cast<int>(count), type.type,
                   is_root ? receive.data : nullptr, static_cast<int>(count), type.type, root, comm_),
        what);
  if (is_root) {
    std::vector<unsigned char> expected(receive.image.size());
    for (int source = 0; source < size_; ++source) {
      for (std::size_t i = 0; i < block; ++i) {
        expected[block * static_cast<std::size_t>(source) + i] = byte(source, i);
      }
    }
    expect(receive, expected, expected.size(), what);
  }
  counted(true);
}

void Checker::scatter(const Type& type, std::size_t count, int root, bool in_place) {
  ++call_;
  const std::size_t block = count * type.bytes;
  const bool is_root = rank_ == root;
  Buffer send(is_root ? block * static_cast<std::size_t>(size_) : 0, false);
  Buffer receive(block, false);
  if (is_root) {
    fill(send, root);
    send.upload();
  }
  const std::string what = describe("MPI_Scatter", type, count, in_place && is_root, root);
  check(MPI_Scatter(is_root ? send.data : nullptr, static_cast<int>(count), type.type,
                    is_root && in_place ? MPI_IN_PLACE : receive.data, static_cast<int>(count), type.type,
                    root, comm_),
        what);
  std::vector<unsigned char> expected(block);
  for (std::size_t i = 0; i < block; ++i) {
    expected[i] = byte(root, block * static_cast<std::size_t>(rank_) + i);
  }
  if (!(is_root && in_place)) {
    expect(receive, expected, block, what);
  } else {
    expect(send, send.image, send.image.size(), what + " (the root's send buffer kept)");
  }
  counted(true);
}

void Checker::alltoall(const Type& type, std::size_t count, bool in_place, int repeats) {
  const std::size_t block = count * type.bytes;
  const std::size_t bytes = block * static_cast<std::size_t>(size_);
  Buffer send(bytes, false);
  Buffer receive(bytes, false);
  for (int repeat = 0; repeat < repeats; ++repeat) {
    ++call_;
    fill(in_place ? receive : send, rank_);
    (in_place ? receive : send).upload();
    const std::string what = describe("MPI_Alltoall", type, count, in_place);
    check(MPI_Alltoall(in_place ? MPI_IN_PLACE : send.data, static_cast<int>(count), type.type, receive.data,
                       static_cast<int>(count), type.type, comm_),
          what);
    std::vector<unsigned char> expected(bytes);
    for (int source = 0; source < size_; ++source) {
      for (std::size_t i = 0; i < block; ++i) {
        expected[block * static_cast<std::size_t>(source) + i] =
            byte(source, block * static_cast<std::size_t>(rank_) + i);
      }
    }
    expect(receive, expected, bytes, what);
    counted(!in_place);
  }
}

void Checker::non_contiguous_gather(std::size_t count) {
  ++call_;
  const int root = size_ - 1;
  MPI_Datatype strided = MPI_DATATYPE_NULL;
  MPI_Type_vector(static_cast<int>(count), 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  const std::size_t block = count * sizeof(int);
  Buffer send(2 * block, false);
  Buffer receive(block * static_cast<std::size_t>(size_), false);
  fill(send, rank_);
  send.upload();
  const std::string what = "MPI_Gather strided MPI_INT count " + std::to_string(count);
  check(MPI_Gather(send.data, 1, strided, receive.data, static_cast<int>(count), MPI_INT, root, comm_), what);
  if (rank_ == root) {
    std::vector<unsigned char> expected(receive.image.size());
    for (int source = 0; source < size_; ++source) {
      for (std::size_t k = 0; k < count; ++k) {
        for (std::size_t b = 0; b < sizeof(int); ++b) {
          expected[block * static_cast<std::size_t>(source) + k * sizeof(int) + b] =
              byte(source, 2 * k * sizeof(int) + b);
        }
      }
    }
    expect(receive, expected, expected.size(), what);
  }
  MPI_Type_free(&strided);
  counted(false);
}

} // namespace data_movement_check
