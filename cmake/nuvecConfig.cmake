# find_package(nuvec CONFIG) with nuvec_DIR = `python -m nuvec --cmake-dir` (or nuvec.cmake_dir()):
# defines the imported target nuvec::nuvec (headers and libnuvec); programs that link it run
# without LD_LIBRARY_PATH (CMake's build rpath holds the library's directory).
# Installed package: nuvec/cmake beside nuvec/include and nuvec/lib; a developer tree: cmake/
# beside include/, the library in build/dev.
get_filename_component(_nuvec_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(nuvec_INCLUDE_DIR "${_nuvec_root}/include")
find_library(nuvec_LIBRARY nuvec PATHS "${_nuvec_root}/lib" "${_nuvec_root}/build/dev" NO_DEFAULT_PATH)
if(NOT nuvec_LIBRARY OR NOT EXISTS "${nuvec_INCLUDE_DIR}/nuvec/nuvec.h")
  set(nuvec_FOUND FALSE)
  set(nuvec_NOT_FOUND_MESSAGE "no libnuvec or nuvec/nuvec.h under ${_nuvec_root}")
  return()
endif()
get_filename_component(nuvec_LIBRARY "${nuvec_LIBRARY}" REALPATH)
if(NOT TARGET nuvec::nuvec)
  add_library(nuvec::nuvec SHARED IMPORTED)
  set_target_properties(nuvec::nuvec PROPERTIES IMPORTED_LOCATION "${nuvec_LIBRARY}"
                                                INTERFACE_INCLUDE_DIRECTORIES "${nuvec_INCLUDE_DIR}")
endif()
set(nuvec_FOUND TRUE)
unset(_nuvec_root)
