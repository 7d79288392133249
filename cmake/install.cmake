# The installable library: libminirt.so (the engine plus the CLI's tools for bindings, exporting only mrt_*),
# the public headers, the CUDA module, a pkg-config file and a CMake package (find_package(minirt)).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

add_library(minirt_shared SHARED ${CMAKE_SOURCE_DIR}/capi/tools_api.c)
# every object of the engine and the CLI's tools (a static library would only give the ones something references)
target_link_libraries(minirt_shared PRIVATE minirt_cli minirt_lib)
set_target_properties(minirt_shared PROPERTIES LINK_LIBRARY_OVERRIDE_minirt_cli WHOLE_ARCHIVE
                      LINK_LIBRARY_OVERRIDE_minirt_lib WHOLE_ARCHIVE)
target_include_directories(minirt_shared PRIVATE ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR} "${MRT_GEN_DIR}"
                           INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_options(minirt_shared PRIVATE "-Wl,--version-script=${CMAKE_SOURCE_DIR}/cmake/libminirt.map"
                    -Wl,--no-undefined)
set_target_properties(minirt_shared PROPERTIES
  OUTPUT_NAME minirt
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}
  LINK_DEPENDS "${CMAKE_SOURCE_DIR}/cmake/libminirt.map"
  # the CUDA module is dlopen'ed by name; it is installed next to the library
  INSTALL_RPATH "$ORIGIN"
  EXPORT_NAME minirt)
add_library(minirt::minirt ALIAS minirt_shared)

# Run paths: the build's (OpenBLAS's folder; the library adds $ORIGIN) are the installed ones. Installing with a
# different run path makes CMake pad the build's with empty entries (the current folder), which the malformed
# corpus's strace check sees; so the CLI is installed as the file it is, and the library is built as installed.
set_target_properties(minirt_shared PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON BUILD_WITH_INSTALL_RPATH ON)
install(PROGRAMS $<TARGET_FILE:minirt> DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS minirt_shared EXPORT minirtTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/minirt/minirt.h ${CMAKE_SOURCE_DIR}/include/minirt/minirt_plugin.h
              ${CMAKE_SOURCE_DIR}/include/minirt/minirt_tools.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/minirt)
if(TARGET minirt_cuda)
  install(TARGETS minirt_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()

# relocatable: the prefix is found from the .pc file's own folder, so `cmake --install --prefix P` works anywhere
file(RELATIVE_PATH MRT_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" MRT_PC_TO_PREFIX "${MRT_PC_TO_PREFIX}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/minirt.pc.in ${CMAKE_BINARY_DIR}/minirt.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/minirt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(EXPORT minirtTargets NAMESPACE minirt:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/minirt)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/minirtConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/minirtConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/minirt)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/minirtConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/minirtConfig.cmake ${CMAKE_BINARY_DIR}/minirtConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/minirt)
