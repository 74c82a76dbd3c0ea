/* halo_demo: 2-D Jacobi relaxation of the Laplace equation with a halo exchange (the `make demo` job).
 *
 * Usage: halo_demo [ITERATIONS [N]]     (defaults 200 and 64: each rank owns an N x N block)
 *
 * The ranks form a non-periodic 2-D grid (MPI_Dims_create, MPI_Cart_create -> "grid"). The top
 * edge of the global domain is held at 1, the others at 0. Per iteration, on grid:
 *   4 x MPI_Irecv and 4 x MPI_Isend of one halo row/column each (north/south: N MPI_DOUBLE;
 *   west/east: 1 element of an N-double column vector type, 8N B); neighbours outside the domain
 *   are MPI_PROC_NULL; one MPI_Waitall of 8;
 *   one Jacobi sweep; MPI_Allreduce of 1 MPI_DOUBLE (the squared residual, 8 B both ways).
 * Rank 0 prints the residual every ITERATIONS/4 iterations and at the end.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int n;            /* interior points per side */
  double *u, *next; /* (n+2) x (n+2) with a one-point halo */
  int north, south, west, east;
  MPI_Comm grid;
  MPI_Datatype column;
} Block;

#define AT(b, a, i, j) ((a)[(size_t)(i) * ((b)->n + 2) + (j)])

static void exchange_halo(Block* b) {
  const int n = b->n;
  MPI_Request requests[8];
  MPI_Irecv(&AT(b, b->u, 0, 1), n, MPI_DOUBLE, b->north, 0, b->grid, &requests[0]);
  MPI_Irecv(&AT(b, b->u, n + 1, 1), n, MPI_DOUBLE, b->south, 1, b->grid, &requests[1]);
  MPI_Irecv(&AT(b, b->u, 1, 0), 1, b->column, b->west, 2, b->grid, &requests[2]);
  MPI_Irecv(&AT(b, b->u, 1, n + 1), 1, b->column, b->east, 3, b->grid, &requests[3]);
  MPI_Isend(&AT(b, b->u, 1, 1), n, MPI_DOUBLE, b->north, 1, b->grid, &requests[4]);
  MPI_Isend(&AT(b, b->u, n, 1), n, MPI_DOUBLE, b->south, 0, b->grid, &requests[5]);
  MPI_Isend(&AT(b, b->u, 1, 1), 1, b->column, b->west, 3, b->grid, &requests[6]);
  MPI_Isend(&AT(b, b->u, 1, n), 1, b->column, b->east, 2, b->grid, &requests[7]);
  MPI_Waitall(8, requests, MPI_STATUSES_IGNORE);
}

static double sweep(Block* b) {
  double local = 0.0;
  for (int i = 1; i <= b->n; ++i)
    for (int j = 1; j <= b->n; ++j) {
      const double v = 0.25 * (AT(b, b->u, i - 1, j) + AT(b, b->u, i + 1, j) + AT(b, b->u, i, j - 1) +
                               AT(b, b->u, i, j + 1));
      const double d = v - AT(b, b->u, i, j);
      local += d * d;
      AT(b, b->next, i, j) = v;
    }
  for (int i = 1; i <= b->n; ++i)
    memcpy(&AT(b, b->u, i, 1), &AT(b, b->next, i, 1), sizeof(double) * (size_t)b->n);
  return local;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iterations = argc > 1 ? atoi(argv[1]) : 200;
  Block b = {.n = argc > 2 ? atoi(argv[2]) : 64};
  int dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
  MPI_Dims_create(size, 2, dims);
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &b.grid);
  MPI_Comm_rank(b.grid, &rank);
  MPI_Cart_coords(b.grid, rank, 2, coords);
  MPI_Cart_shift(b.grid, 0, 1, &b.north, &b.south);
  MPI_Cart_shift(b.grid, 1, 1, &b.west, &b.east);
  MPI_Type_vector(b.n, 1, b.n + 2, MPI_DOUBLE, &b.column);
  MPI_Type_commit(&b.column);

  const size_t points = (size_t)(b.n + 2) * (size_t)(b.n + 2);
  b.u = calloc(points, sizeof(double));
  b.next = calloc(points, sizeof(double));
  if (coords[0] == 0) /* the global top boundary lives in this block's north halo row */
    for (int j = 0; j < b.n + 2; ++j)
      AT(&b, b.u, 0, j) = 1.0;

  double residual = 0.0;
  for (int it = 1; it <= iterations; ++it) {
    exchange_halo(&b);
    const double local = sweep(&b);
    MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, b.grid);
    if (rank == 0 && (it % (iterations / 4 > 0 ? iterations / 4 : 1) == 0 || it == iterations))
      printf("halo_demo: iteration %4d  residual %.6e\n", it, sqrt(residual));
  }
  if (rank == 0)
    printf("halo_demo: %d x %d ranks, %d x %d points each, final residual %.6e\n", dims[0], dims[1], b.n, b.n,
           sqrt(residual));
  MPI_Type_free(&b.column);
  MPI_Comm_free(&b.grid);
  free(b.u);
  free(b.next);
  MPI_Finalize();
  return 0;
}
