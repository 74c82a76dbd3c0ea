#pragma once
// CUDA kernel names for people. CUPTI records a kernel's mangled symbol
// (_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLP...); demangled it is a whole signature with
// namespaces, template arguments and parameters. The short name keeps what a timeline label has
// room for, as Nsight Systems does: the function's own name, plus the first template argument
// where the name alone says nothing (cutlass::Kernel2<cutlass_80_simt_sgemm_...>).
#include <string>
#include <string_view>

namespace commlens::analysis {

// The demangled signature; names that are not mangled C++ symbols come back unchanged.
std::string demangled_kernel_name(const std::string& name);
// "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "vectorized_elementwise_kernel", "Kernel2<cutlass_80_...>".
std::string short_kernel_name(const std::string& name);

// Communication kernels are NCCL's (the name holds ncclDevKernel or ncclKernel, mangled or not) and
// those an MPI or NCCL call launched (the GPU runtime's); every other kernel computes. The training
// steps' GPU breakdown (training_steps_gpu.cpp) draws the same line in SQL.
enum class KernelKind { Compute, Communication };
KernelKind kernel_kind(std::string_view name, bool launched_in_call);

} // namespace commlens::analysis
