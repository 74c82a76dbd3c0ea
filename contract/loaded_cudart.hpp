#pragma once
// The shared libcudart libraries loaded in this process. libcommlens.so's interposed runtime
// functions (collectors/cudart_calls) call one of them when the calling object's own cannot be
// asked, and the CUDA collector takes copies from those calls only where one is loaded
// (cuda_plugin/plugin_entry.cpp). Header only: both libraries use it.
#include <link.h>

#include <cstddef>
#include <cstring>

namespace commlens::contract {

// Calls visit(path) for each loaded libcudart, in load order, until it returns true; returns
// whether one did.
template <class Visit> bool any_loaded_cudart(Visit visit) {
  return dl_iterate_phdr(
             [](dl_phdr_info* info, std::size_t, void* data) {
               if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, "/libcudart.so") == nullptr) {
                 return 0;
               }
               return (*static_cast<Visit*>(data))(info->dlpi_name) ? 1 : 0;
             },
             &visit) != 0;
}

} // namespace commlens::contract
