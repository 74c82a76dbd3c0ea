# Install layout: lib/libcommlens.so (preload or link), bin/commlens, a CMake package
# (find_package(commlens) -> commlens::commlens, COMMLENS_LIBRARY, COMMLENS_EXECUTABLE) and
# a pkg-config file (pkg-config --libs commlens; --variable=preload for LD_PRELOAD).
include(CMakePackageConfigHelpers)
set(commlens_package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/commlens)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/commlensConfig.cmake.in
  ${CMAKE_BINARY_DIR}/commlensConfig.cmake
  INSTALL_DESTINATION ${commlens_package_dir}
  PATH_VARS CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/commlensConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/commlensConfig.cmake ${CMAKE_BINARY_DIR}/commlensConfigVersion.cmake
  DESTINATION ${commlens_package_dir})

configure_file(${CMAKE_CURRENT_LIST_DIR}/commlens.pc.in ${CMAKE_BINARY_DIR}/commlens.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/commlens.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
# The notebook module (python/commlens.py): PYTHONPATH=<prefix>/share/commlens/python.
install(FILES ${CMAKE_SOURCE_DIR}/python/commlens.py DESTINATION ${CMAKE_INSTALL_DATADIR}/commlens/python)
