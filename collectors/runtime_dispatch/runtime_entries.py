"""The GPU collective runtime's entries of the `runtime` functions of mpi_functions.spec:
runtime_entries.hpp (the wrappers' side) and runtime_entry_points.hpp (what the runtime implements).
Part of generate_wrappers.py."""


def runtime_entry(function):
    """The RuntimeCallEntries member of a `runtime` function: MPI_Sendrecv_replace -> sendrecv_replace."""
    return function.name.removeprefix("MPI_").lower()


RUNTIME_ENTRY_TAIL = "std::uint64_t call_id, std::uint8_t* implementation"


def runtime_entries_header(functions, header):
    """runtime_entries.hpp, the PMPI side: one entry per `runtime` function, null until the runtime
    installs its implementation."""
    members = "\n".join(f"  int (*{runtime_entry(f)})({', '.join(f.param_decls)}, {RUNTIME_ENTRY_TAIL}) = nullptr;"
                        for f in functions)
    return f"""{header}#pragma once
// The entries of the GPU collective runtime, one per `runtime` function of mpi_functions.spec. Each
// takes the function's parameters, then the recorded call's id (0 while collection is off) and
// where to write what ran (an implementations.id; 0 = the MPI library); it returns the MPI return
// code. A status may be MPI_STATUS_IGNORE.
#include "mpi_header.hpp"

#include <cstdint>

namespace commlens::contract {{

struct RuntimeCallEntries {{
{members}
}};

}} // namespace commlens::contract
"""


def runtime_entry_points_header(functions, header):
    """runtime_entry_points.hpp, the runtime's side: the implementation it must define for each
    `runtime` function (commlens::runtime::entry::MPI_NAME), and their installation."""
    declarations = "\n".join(f"int {f.name}({', '.join(f.param_decls)}, {RUNTIME_ENTRY_TAIL}) noexcept;"
                             for f in functions)
    installs = "\n".join(f'  if (accept("{f.family}", "{runtime_entry(f)}")) {{\n'
                         f"    entries.{runtime_entry(f)} = entry::{f.name};\n  }}" for f in functions)
    return f"""{header}#pragma once
// What the GPU collective runtime implements: one entry per `runtime` function of
// mpi_functions.spec, with the signature of its RuntimeCallEntries member (runtime_entries.hpp).
#include "runtime_entries.hpp"

namespace commlens::runtime {{

namespace entry {{

{declarations}

}} // namespace entry

// Installs the entry of every `runtime` function for which accept(family, entry name) is true
// (family: the spec's, entry name: RuntimeCallEntries' member, "allreduce" for MPI_Allreduce).
template <typename Accept>
void install_runtime_entries(contract::RuntimeCallEntries& entries, Accept&& accept) {{
{installs}
}}

}} // namespace commlens::runtime
"""
