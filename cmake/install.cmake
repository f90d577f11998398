# Installs the libraries, headers and a package config for find_package(minitensor).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

get_property(mt_libs GLOBAL PROPERTY MT_LIBRARIES)
install(TARGETS minitensor ${mt_libs} EXPORT minitensorTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
set(mt_header_dirs core allocator kernels placement runtime)
if(MT_DISTRIBUTED_ENABLED)
  list(APPEND mt_header_dirs distributed)
endif()
foreach(dir ${mt_header_dirs})
  install(DIRECTORY ${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/minitensor/${dir}
    FILES_MATCHING PATTERN "*.h" PATTERN "cuda" EXCLUDE PATTERN "no_cuda" EXCLUDE)
endforeach()
install(EXPORT minitensorTargets NAMESPACE minitensor::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/minitensor)
set(MT_CUDA_ENABLED_FOR_CONFIG ${MT_CUDA_ENABLED})
set(MT_DISTRIBUTED_FOR_CONFIG ${MT_DISTRIBUTED_ENABLED})
configure_package_config_file(cmake/minitensorConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/minitensorConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/minitensor)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/minitensorConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/minitensorConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/minitensorConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/minitensor)
