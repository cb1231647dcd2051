# The Python distribution (pyproject.toml, scikit-build-core): one wheel holds the swr package
# (python/swr), libswr_runtime.so beside it (where swr/_native.py looks first), swr-tune as a
# script of the environment (on its PATH once installed), swr/_version.py and the compiled hot path
# (swr._hotpath_ext from python/swr/_hotpath_ext.c, CPython's stable ABI 3.10). With
# SWR_PYTHON_PACKAGE (pyproject.toml sets it) they are installed as the component `python` and
# built by the target swr_python_package alone, so pip builds these, not the tests, benchmarks,
# examples or the C++ package. Without it, only the target swr_hotpath_ext is defined, outside
# `all` (bench/swr_torch_device_run.sh stages it from the build tree).

# The compiled hot path is optional: without Python's headers (python3-dev) or a C compiler the
# wheel goes without it, and swr.torch runs the same path in Python (swr/_hotpath.py).
include(CheckLanguage)
check_language(C)
find_package(Python 3.10 COMPONENTS Interpreter Development.Module)
if(CMAKE_C_COMPILER AND Python_Development.Module_FOUND)
  enable_language(C)
  set(swr_hotpath_all "")
  if(NOT SWR_PYTHON_PACKAGE)
    set(swr_hotpath_all EXCLUDE_FROM_ALL)
  endif()
  # The source defines Py_LIMITED_API (3.10): one build serves every CPython from 3.10 on.
  Python_add_library(swr_hotpath_ext MODULE ${swr_hotpath_all}
    "${PROJECT_SOURCE_DIR}/python/swr/_hotpath_ext.c")
  set_target_properties(swr_hotpath_ext PROPERTIES OUTPUT_NAME _hotpath_ext PREFIX ""
    SUFFIX ".abi3.so" LIBRARY_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/python/swr")
  target_compile_options(swr_hotpath_ext PRIVATE -Wall -Wextra)
else()
  message(STATUS "swr._hotpath_ext is not built (needs a C compiler and Python's headers): "
                 "swr.torch will run its hot path in Python")
endif()

if(NOT SWR_PYTHON_PACKAGE)
  return()
endif()

add_custom_target(swr_python_package ALL)
add_dependencies(swr_python_package swr_runtime_shared swr-tune)
if(TARGET swr_hotpath_ext)
  add_dependencies(swr_python_package swr_hotpath_ext)
  install(TARGETS swr_hotpath_ext LIBRARY DESTINATION swr COMPONENT python)
endif()

# The runtime under its link name: ctypes loads it by path, and nothing in the wheel links it (a
# wheel keeps no symbolic links, so its versioned names would be copies).
install(FILES "$<TARGET_FILE:swr_runtime_shared>" DESTINATION swr RENAME libswr_runtime.so
  COMPONENT python)
# SKBUILD_SCRIPTS_DIR: the wheel's scripts, which pip puts in the environment's bin/.
if(NOT DEFINED SKBUILD_SCRIPTS_DIR)
  set(SKBUILD_SCRIPTS_DIR bin)
endif()
install(TARGETS swr-tune RUNTIME DESTINATION "${SKBUILD_SCRIPTS_DIR}" COMPONENT python)

# swr.__version__: the project's version (project() in CMakeLists.txt, the one place it is set).
file(CONFIGURE OUTPUT "${PROJECT_BINARY_DIR}/python/_version.py"
  CONTENT "__version__ = \"${PROJECT_VERSION}\"\n")
install(FILES "${PROJECT_BINARY_DIR}/python/_version.py" DESTINATION swr COMPONENT python)
