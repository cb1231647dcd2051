# `cmake --install` puts the runtime in a prefix: the public headers (include/swr/), the shared
# runtime (libswr_runtime.so, swr::runtime) and its static form (libswr_runtime.a and the layer
# archives it needs, swr::runtime_static), a CMake package (find_package(swr CONFIG)) and a
# pkg-config file (swr.pc). Nothing of the tuner, the model, the report or the command line.
#
# The static form is the layer archives as they are (runtime, db, generator, driver), not one
# merged archive: the exported targets carry their order and their dependencies, so a CMake user
# links swr::runtime_static alone, and no archive is rewritten at build time.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(swr_cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/swr")

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/swr" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
  FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")

install(TARGETS swr_runtime_shared EXPORT swrTargets
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(EXPORT swrTargets NAMESPACE swr:: DESTINATION "${swr_cmake_dir}")

set_target_properties(swr_runtime PROPERTIES EXPORT_NAME runtime_static)
install(TARGETS swr_runtime swr_db swr_generator swr_driver swr_support EXPORT swrStaticTargets
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(EXPORT swrStaticTargets NAMESPACE swr:: DESTINATION "${swr_cmake_dir}")

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/swrConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/swrConfig.cmake" INSTALL_DESTINATION "${swr_cmake_dir}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/swrConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/swrConfig.cmake" "${PROJECT_BINARY_DIR}/swrConfigVersion.cmake"
  DESTINATION "${swr_cmake_dir}")

# pkg-config: the prefix is found from the file's own place, so the prefix can be moved.
file(RELATIVE_PATH swr_pc_to_prefix "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
configure_file("${PROJECT_SOURCE_DIR}/cmake/swr.pc.in" "${PROJECT_BINARY_DIR}/swr.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/swr.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
