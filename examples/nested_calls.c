/* nested_calls ITER: MPI calls made from inside other MPI calls, by the callbacks MPI runs for the
 * program (as mpi4py's generalized requests and communicator attributes do). A profiler numbers a
 * call when it starts and stores it when it ends, so on every thread these calls end out of the
 * order they started: the inner ones first.
 *
 * Every rank, once: MPI_Init, MPI_Comm_size(MPI_COMM_WORLD), MPI_Comm_create_keyval (copy and
 * delete callbacks below), MPI_Comm_dup(MPI_COMM_WORLD) -> base, MPI_Comm_set_attr(base).
 * Per iteration, on every rank:
 *   MPI_Grequest_start, MPI_Grequest_complete, then MPI_Wait on that request: MPI runs its query
 *     callback inside MPI_Wait, which calls MPI_Status_set_elements and MPI_Status_set_cancelled.
 *   MPI_Comm_dup(base): MPI runs the attribute's copy callback inside it, which calls MPI_Comm_rank.
 *   MPI_Allreduce of one int on the copy (4 bytes sent, 4 received).
 *   MPI_Comm_free(copy): MPI runs the delete callback inside it, which calls MPI_Comm_size.
 * Every rank, once at the end: MPI_Comm_free(base) (its delete callback calls MPI_Comm_size once
 * more), MPI_Comm_free_keyval, MPI_Finalize.
 * So per rank: MPI_Wait, MPI_Grequest_start, MPI_Grequest_complete, MPI_Status_set_elements,
 * MPI_Status_set_cancelled, MPI_Comm_rank and MPI_Allreduce ITER times each; MPI_Comm_dup and
 * MPI_Comm_free ITER + 1 times; MPI_Comm_size ITER + 2 times. Nothing else calls MPI.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int query(void* extra_state, MPI_Status* status) {
  (void)extra_state;
  MPI_Status_set_elements(status, MPI_BYTE, 0);
  MPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  return MPI_SUCCESS;
}

static int free_request(void* extra_state) {
  (void)extra_state;
  return MPI_SUCCESS;
}

static int cancel_request(void* extra_state, int complete) {
  (void)extra_state;
  (void)complete;
  return MPI_SUCCESS;
}

static int copy_attribute(MPI_Comm old, int keyval, void* extra_state, void* value_in, void* value_out,
                          int* flag) {
  (void)old;
  (void)keyval;
  (void)extra_state;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  *(void**)value_out = value_in;
  *flag = 1;
  return MPI_SUCCESS;
}

static int delete_attribute(MPI_Comm comm, int keyval, void* value, void* extra_state) {
  (void)comm;
  (void)keyval;
  (void)value;
  (void)extra_state;
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return MPI_SUCCESS;
}

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? atoi(argv[1]) : 10;
  MPI_Init(&argc, &argv);
  int world_size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  int keyval = MPI_KEYVAL_INVALID;
  MPI_Comm_create_keyval(copy_attribute, delete_attribute, &keyval, NULL);
  static int attribute = 42;
  MPI_Comm base = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &base);
  MPI_Comm_set_attr(base, keyval, &attribute);
  int failures = 0;
  for (int iteration = 0; iteration < iterations; ++iteration) {
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Grequest_start(query, free_request, cancel_request, NULL, &request);
    MPI_Grequest_complete(request);
    MPI_Status status;
    MPI_Wait(&request, &status);

    MPI_Comm copy = MPI_COMM_NULL;
    MPI_Comm_dup(base, &copy);
    int one = 1;
    int sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, copy);
    failures += sum != world_size;
    MPI_Comm_free(&copy);
  }
  MPI_Comm_free(&base);
  MPI_Comm_free_keyval(&keyval);
  if (failures != 0) {
    fprintf(stderr, "nested_calls: %d allreduces gave a wrong sum\n", failures);
  }
  MPI_Finalize();
  return failures != 0;
}
