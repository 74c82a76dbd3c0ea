#pragma once
// mpi.h without the C++ bindings: the wrappers are C entry points, and the deprecated C++ bindings
// of Open MPI and MPICH would drag in a second library.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

// The only symbols libcommlens.so exports: the MPI entry points it intercepts.
#define COMMLENS_EXPORT __attribute__((visibility("default")))
