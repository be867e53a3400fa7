# The CMake package config (find_package(fxtrace), beside the pkg-config files) and the Debian
# package (cpack -G DEB). Included by the top-level CMakeLists.txt after the install rules.
include(CMakePackageConfigHelpers)
set(FXTRACE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/fxtrace)
install(EXPORT fxtraceTargets NAMESPACE fxtrace:: DESTINATION ${FXTRACE_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/fxtraceConfig.cmake.in
  ${PROJECT_BINARY_DIR}/fxtraceConfig.cmake INSTALL_DESTINATION ${FXTRACE_CMAKE_DIR})
# 0.x: a minor version may change the API (semantic versioning before 1.0).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/fxtraceConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/fxtraceConfig.cmake
  ${PROJECT_BINARY_DIR}/fxtraceConfigVersion.cmake DESTINATION ${FXTRACE_CMAKE_DIR})

# ---- Debian package: `cpack -G DEB` in the build directory ------------------------------------
# Everything `cmake --install` installs (binaries, libraries, headers, pkg-config and CMake
# files, man pages, systemd units), under /usr. CPACK_SET_DESTDIR: the install runs with the
# real prefix (/usr) and a DESTDIR, so the units name /usr/bin/trace_manager, not the staging
# directory.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME fxtrace)
set(CPACK_PACKAGE_VENDOR "fxtrace")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Fuchsia tracing system for Linux: instrumentation, trace manager, trace client")
set(kernel_provider "")
if(TARGET trace_kernel_provider)
  set(kernel_provider "the kernel trace provider (ftrace events, with its systemd unit), ")
endif()
set(CPACK_PACKAGE_DESCRIPTION
    "fxtrace records traces in the Fuchsia Trace Format (FXT): instrumentation macros, \
TRACE_EVENT() tracepoints and the libfxtrace engine for C and C++ programs, the trace_manager \
daemon (with systemd socket activation), ${kernel_provider}the trace client (record, dump, \
convert to Chrome JSON, summary) and libtrace-reader. Archives open in Perfetto UI.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_PREFIX /usr) # the prefix of the install CPACK_SET_DESTDIR runs
set(CPACK_SET_DESTDIR ON)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "fxtrace developers <fxtrace@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON) # dpkg-shlibdeps: libc6 (>= ...)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
# ldconfig trigger for the shared libraries; systemctl daemon-reload after install and removal
# when systemd runs (the units are not enabled by the package).
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/cmake/deb/postinst
    ${PROJECT_SOURCE_DIR}/cmake/deb/postrm ${PROJECT_SOURCE_DIR}/cmake/deb/triggers)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
