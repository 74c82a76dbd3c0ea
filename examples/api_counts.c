/* api_counts: calls that move no data, each made a known number of times, so a profile can be
 * checked for exact counts of the functions a user counting calls looks for (a rank query in a
 * loop, a datatype built per message, a communicator made per step).
 *
 * Usage: api_counts ROUNDS     (any world size)
 *
 * Every rank, in this order: MPI_Init; then ROUNDS times each of
 *   MPI_Comm_rank and MPI_Comm_size (MPI_COMM_WORLD),
 *   MPI_Type_contiguous (4 MPI_INT), MPI_Type_commit, MPI_Type_size, MPI_Type_free,
 *   MPI_Info_create, MPI_Info_set, MPI_Info_free,
 *   MPI_Comm_get_attr (MPI_TAG_UB on MPI_COMM_WORLD),
 *   MPI_Comm_group, MPI_Group_size, MPI_Group_free,
 *   MPI_Wtime (not wrapped: it must not appear);
 * once each: MPI_Comm_size, MPI_Type_vector, MPI_Type_commit, MPI_Type_free (so ROUNDS + 1 of
 *   each of these four),
 *   MPI_Dims_create, MPI_Cart_create (a periodic ring of all ranks), MPI_Cart_shift,
 *   MPI_Comm_free of the ring, MPI_Get_processor_name, MPI_Initialized, MPI_Query_thread,
 *   MPI_Error_string, MPI_Barrier (MPI_COMM_WORLD); then MPI_Finalize.
 * Nothing else is called. Prints "api_counts done" on rank 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void query_rounds(int rounds) {
  for (int i = 0; i < rounds; ++i) {
    int rank = 0, size = 0, type_size = 0, found = 0, group_size = 0;
    void* tag_ub = NULL;
    MPI_Datatype quad;
    MPI_Info info;
    MPI_Group group;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Type_contiguous(4, MPI_INT, &quad);
    MPI_Type_commit(&quad);
    MPI_Type_size(quad, &type_size);
    MPI_Type_free(&quad);
    MPI_Info_create(&info);
    MPI_Info_set(info, "commlens", "counted");
    MPI_Info_free(&info);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &found);
    MPI_Comm_group(MPI_COMM_WORLD, &group);
    MPI_Group_size(group, &group_size);
    MPI_Group_free(&group);
    if (MPI_Wtime() < 0 || type_size != 16 || !found || group_size != size || rank >= size)
      abort();
  }
}

static void single_calls(void) {
  MPI_Datatype strided;
  MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &strided);
  MPI_Type_commit(&strided);
  MPI_Type_free(&strided);

  int size = 0, dims[1] = {0}, periods[1] = {1}, left = 0, right = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Dims_create(size, 1, dims);
  MPI_Comm ring;
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
  MPI_Cart_shift(ring, 0, 1, &left, &right);
  MPI_Comm_free(&ring);

  char name[MPI_MAX_PROCESSOR_NAME], message[MPI_MAX_ERROR_STRING];
  int length = 0, initialized = 0, provided = 0;
  MPI_Get_processor_name(name, &length);
  MPI_Initialized(&initialized);
  MPI_Query_thread(&provided);
  MPI_Error_string(MPI_ERR_COMM, message, &length);
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rounds = argc > 1 ? atoi(argv[1]) : 100;
  query_rounds(rounds);
  single_calls();
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank); /* the profiling interface: not counted */
  if (rank == 0)
    printf("api_counts done\n");
  MPI_Finalize();
  return 0;
}
