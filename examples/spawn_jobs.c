/* spawn_jobs: a job that spawns another, so that two jobs of one run write into one output folder
 * with the same MPI_COMM_WORLD ranks.
 *
 * Usage: spawn_jobs CHILDREN     (started by mpirun on P ranks; spawns CHILDREN more processes)
 *
 * Parent job, rank r of P: MPI_Init, MPI_Comm_get_parent (MPI_COMM_NULL), 10 + r MPI_Comm_rank,
 *   MPI_Comm_spawn of this program with argument "child" (root 0, MPI_COMM_WORLD), MPI_Barrier on
 *   the inter-communicator, MPI_Comm_disconnect of it, MPI_Finalize.
 * Child job, rank c of CHILDREN: MPI_Init, MPI_Comm_get_parent, 100 + c MPI_Comm_rank, MPI_Barrier
 *   on the parent inter-communicator, MPI_Comm_disconnect of it, MPI_Finalize.
 * The distinct MPI_Comm_rank counts tell every process's data apart. Nothing else is called.
 */
#include <mpi.h>
#include <stdlib.h>

static void rank_queries(int times) {
  int rank = 0;
  for (int i = 0; i < times; ++i)
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm other_job;
  MPI_Comm_get_parent(&other_job);
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank); /* the profiling interface: not counted */
  if (other_job == MPI_COMM_NULL) {
    rank_queries(10 + rank);
    char* child_arguments[] = {"child", NULL};
    const int children = argc > 1 ? atoi(argv[1]) : 2;
    MPI_Comm_spawn(argv[0], child_arguments, children, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &other_job,
                   MPI_ERRCODES_IGNORE);
  } else {
    rank_queries(100 + rank);
  }
  MPI_Barrier(other_job);
  MPI_Comm_disconnect(&other_job);
  MPI_Finalize();
  return 0;
}
