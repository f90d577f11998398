# Decides MT_CUDA_ENABLED from MT_CUDA (AUTO|ON|OFF) and, when on, enables CUDA.
include(CheckLanguage)
set(MT_CUDA_ENABLED OFF)
if(MT_CUDA STREQUAL "ON" OR MT_CUDA STREQUAL "AUTO")
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(MT_CUDA_ENABLED ON)
  elseif(MT_CUDA STREQUAL "ON")
    message(FATAL_ERROR "MT_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
elseif(NOT MT_CUDA STREQUAL "OFF")
  message(FATAL_ERROR "MT_CUDA must be AUTO, ON or OFF, not '${MT_CUDA}'")
endif()

if(MT_CUDA_ENABLED)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  enable_language(CUDA)
  # CMake 3.25 does not know nvcc's C++20 flag yet.
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)
endif()
message(STATUS "minitensor: CUDA backend ${MT_CUDA_ENABLED} (MT_CUDA=${MT_CUDA})")

# mt_backend_sources(<var> <folder>): appends <folder>/cuda/*.{cc,cu} when CUDA is on, else
# <folder>/no_cuda/*.cc, to <var>. Sources carry no #ifdef.
function(mt_backend_sources var folder)
  if(MT_CUDA_ENABLED)
    file(GLOB found CONFIGURE_DEPENDS ${folder}/cuda/*.cc ${folder}/cuda/*.cu)
  else()
    file(GLOB found CONFIGURE_DEPENDS ${folder}/no_cuda/*.cc)
  endif()
  set(${var} ${${var}} ${found} PARENT_SCOPE)
endfunction()

# mt_library(<name> SOURCES ... DEPS ...): a static library of the project.
function(mt_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<INSTALL_INTERFACE:include/minitensor>)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  target_compile_options(${name} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
  set_property(GLOBAL APPEND PROPERTY MT_LIBRARIES ${name})
endfunction()
