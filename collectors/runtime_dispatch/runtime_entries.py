"""The GPU collective runtime's entries of the `runtime` functions of mpi_functions.spec:
runtime_entries.hpp (the wrappers' side), runtime_entry_points.hpp (what the runtime implements)
and runtime_collective_names.hpp (the names settings and tuning tables give its collectives).
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


def runtime_collective_names_header(functions, header):
    """runtime_collective_names.hpp: the entry names of the `runtime` functions of the collective
    family, blocking and nonblocking (those with a request), in the spec's order. Plain C++ (no MPI),
    so the tuning table's code and the settings check names against the same lists."""
    collectives = [f for f in functions if f.family == "collective"]

    def names(selected):
        return ", ".join(f'"{runtime_entry(f)}"' for f in selected)

    blocking = names(f for f in collectives if "request" not in f.roles)
    nonblocking = names(f for f in collectives if "request" in f.roles)
    return f"""{header}#pragma once
// The collectives the GPU collective runtime may run, by the names COMMLENS_RUNTIME_COLLECTIVES and
// the tuning table's rules use: the `runtime` functions of mpi_functions.spec's collective family
// (MPI_Reduce_scatter_block -> reduce_scatter_block). Point-to-point is one name, p2p, for its
// whole family.
#include <string_view>

namespace commlens::contract {{

inline constexpr std::string_view kBlockingRuntimeCollectives[] = {{{blocking}}};
inline constexpr std::string_view kNonblockingRuntimeCollectives[] = {{{nonblocking}}};
inline constexpr std::string_view kPointToPointName = "p2p";

}} // namespace commlens::contract
"""
