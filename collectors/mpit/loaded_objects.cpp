#include "loaded_objects.hpp"

#include <dlfcn.h>
#include <link.h>

namespace commlens::mpit {

SharedObjects loaded_shared_objects() {
  SharedObjects objects;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
          static_cast<SharedObjects*>(data)->insert(info->dlpi_name);
        }
        return 0;
      },
      &objects);
  return objects;
}

void keep_loaded_since(const SharedObjects& before) {
  for (const std::string& object : loaded_shared_objects()) {
    if (!before.contains(object)) {
      dlopen(object.c_str(), RTLD_NOW | RTLD_NOLOAD); // the handle is never closed: that is the point
    }
  }
}

} // namespace commlens::mpit
