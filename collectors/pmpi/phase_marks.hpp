#pragma once
// Where phases begin: MPI_Pcontrol (level 2 and above) and, through the CUDA collector, NVTX ranges
// that mark training steps (COMMLENS_STEP_RANGE). Both open the profiler's next phase and tell the
// collectors (CollectorSlot::phase_begun).
#include "commlens/profiler/profiler.hpp"

namespace commlens::pmpi {

enum class PhaseMark { Pcontrol, NvtxStepRange };

// Opens the next phase at `level` and tells the collectors. Once the program has called
// MPI_Pcontrol with a level of 2 or more it marks its phases itself, and NVTX step ranges open none:
// a program that does both would otherwise count every step twice. Returns whether a phase began.
bool begin_phase(Profiler& profiler, int level, PhaseMark mark) noexcept;

} // namespace commlens::pmpi
