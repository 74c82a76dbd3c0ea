// main() of the runtime's host-only tests that ask MPI about datatypes: a singleton MPI process.
#define OMPI_SKIP_MPICXX 1 // the C API only: the C++ bindings would need libmpi_cxx
#define MPICH_SKIP_MPICXX 1
#include <gtest/gtest.h>
#include <mpi.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  MPI_Init(&argc, &argv);
  const int failed = RUN_ALL_TESTS();
  MPI_Finalize();
  return failed;
}
