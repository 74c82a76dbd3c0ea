#pragma once
// Where `commlens run` finds libcommlens.so, the library it preloads into the profiled program.
#include <filesystem>

namespace commlens::cli {

// In order: $COMMLENS_LIBRARY; the install prefix of this executable (<prefix>/lib*/libcommlens.so,
// so an installed commlens never picks up a stale build tree); the build tree it was built in.
// Throws analysis::AnalysisError listing where it looked.
std::filesystem::path find_preload_library();

// Puts `library` first in LD_PRELOAD, keeping what is there, so the commands started from here
// (mpirun passes it on to the ranks on this host) load it.
void preload_in_child_processes(const std::filesystem::path& library);

} // namespace commlens::cli
