#pragma once
// Shared objects that must outlive Open MPI's use of them. MPI_T_init_thread before PMPI_Init
// loads every MCA component; PMPI_Init then unloads (dlclose) the ones it does not select while
// Open MPI 4.1's variable registry still points into them, so reading their cvars would touch
// unmapped memory. Holding one more reference to each keeps them mapped until the process exits.
#include <set>
#include <string>

namespace commlens::mpit {

using SharedObjects = std::set<std::string>;

SharedObjects loaded_shared_objects();
// Takes a reference (dlopen RTLD_NOLOAD, never closed) on every object loaded since `before`;
// objects loaded earlier, the application's own plug-ins among them, are left alone.
void keep_loaded_since(const SharedObjects& before);

} // namespace commlens::mpit
