/* error_returns: calls that fail, with MPI_ERRORS_RETURN on MPI_COMM_WORLD, so the program goes on.
 * A profiler must still store each as the program made it: its bytes, datatype and communicator.
 *
 * Usage: error_returns N
 *
 * Per rank, N times: MPI_Send of 16 MPI_INT (64 B) to rank P + 7, which does not exist
 * (MPI_ERR_RANK), and MPI_Allreduce of 8 MPI_DOUBLE (64 B each way) with MPI_OP_NULL (MPI_ERR_OP).
 * Then one MPI_Barrier that succeeds. Prints "error_returns: N failed sends, N failed allreduces".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int n = argc > 1 ? atoi(argv[1]) : 5;
  int values[16] = {0};
  double in[8] = {0}, out[8] = {0};
  int failed_sends = 0, failed_allreduces = 0;
  for (int i = 0; i < n; ++i) {
    failed_sends += MPI_Send(values, 16, MPI_INT, size + 7, 0, MPI_COMM_WORLD) != MPI_SUCCESS;
    failed_allreduces += MPI_Allreduce(in, out, 8, MPI_DOUBLE, MPI_OP_NULL, MPI_COMM_WORLD) != MPI_SUCCESS;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    printf("error_returns: %d failed sends, %d failed allreduces\n", failed_sends, failed_allreduces);
  MPI_Finalize();
  return 0;
}
