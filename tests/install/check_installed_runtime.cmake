# cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -DCXX_COMPILER=...
#       -DC_COMPILER=... -DPKG_CONFIG=... -DREADELF=... -DNM=... -DGEMM_DB=... (a results database
#       with the H200 GEMM sweep) -P check_installed_runtime.cmake
#
# Installs the build into WORK_DIR/prefix and checks it the way an outside project uses it. Any
# failed check stops with FATAL_ERROR naming it. Needs no GPU: the examples are run with every
# device hidden, so they answer the lookup and stop.
cmake_minimum_required(VERSION 3.25)

function(run_checked what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "${what} failed (${code}):\n${out}\n${err}")
  endif()
  set(run_output "${out}${err}" PARENT_SCOPE)
endfunction()

function(require_match text pattern what)
  if(NOT text MATCHES "${pattern}")
    message(FATAL_ERROR "${what}: expected /${pattern}/ in:\n${text}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
run_checked("cmake --install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")

# What the prefix holds: headers, the shared and static runtime, the CMake and pkg-config files;
# nothing of the tuner.
file(GLOB_RECURSE installed RELATIVE "${prefix}" "${prefix}/*")
foreach(expected include/swr/swr.h include/swr/attention.hpp include/swr/gemm.hpp
        lib/libswr_runtime.a lib/cmake/swr/swrConfig.cmake lib/cmake/swr/swrConfigVersion.cmake
        lib/pkgconfig/swr.pc)
  if(NOT expected IN_LIST installed)
    message(FATAL_ERROR "the prefix lacks ${expected}; it holds: ${installed}")
  endif()
endforeach()
foreach(file IN LISTS installed)
  if(file MATCHES "tuner|swr_tuner|swr_cli|swr_report|swr_model|swr-tune")
    message(FATAL_ERROR "the prefix holds ${file}, which is not part of the runtime")
  endif()
endforeach()
set(shared "${prefix}/lib/libswr_runtime.so")
if(NOT EXISTS "${shared}")
  message(FATAL_ERROR "the prefix lacks lib/libswr_runtime.so")
endif()

# The shared library loads libcuda and libnvrtc at run time and links no CUDA library.
run_checked("readelf -d" "${READELF}" -d "${shared}")
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*" needed "${run_output}")
foreach(entry IN LISTS needed)
  if(entry MATCHES "libcuda|libnvrtc|libcupti|libcublas|libcudart")
    message(FATAL_ERROR "libswr_runtime.so needs a CUDA library: ${entry}")
  endif()
endforeach()
message(STATUS "libswr_runtime.so needs: ${needed}")

# It exports the C API and the public C++ API only: no tuner, command line, database layer,
# SQLiteCpp or libcrypto symbol.
run_checked("nm -D" "${NM}" -D --defined-only -C "${shared}")
string(REPLACE "\n" ";" exported "${run_output}")
set(public_count 0)
foreach(line IN LISTS exported)
  if(line STREQUAL "")
    continue()
  endif()
  if(NOT line MATCHES " (swr_[a-z0-9_]+|swr::[A-Za-z_]+.*|typeinfo.* swr::.*|vtable for swr::.*)$")
    message(FATAL_ERROR "libswr_runtime.so exports a symbol outside the public API: ${line}")
  endif()
  if(line MATCHES "TuningSession|swr::cli|swr::db::|swr::tuner|SQLite::|EVP_|measure_variant")
    message(FATAL_ERROR "libswr_runtime.so exports an internal symbol: ${line}")
  endif()
  math(EXPR public_count "${public_count} + 1")
endforeach()
foreach(symbol swr_catalog_open swr_best_attention swr_run_gemm swr_prepare_attention
        swr_prepare_gemm swr_launch_attention swr_launch_gemm swr_best_attention_v2
        swr_run_attention_v2 swr_prepare_attention_v2 swr_launch_attention_v2 "swr::TunedCatalog::open"
        "swr::Attention::run" "swr::Gemm::run" "swr::Attention::prepare"
        "swr::PreparedAttention::run" "swr::PreparedGemm::run")
  string(FIND "${run_output}" "${symbol}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "libswr_runtime.so does not export ${symbol}")
  endif()
endforeach()
message(STATUS "libswr_runtime.so exports ${public_count} symbols")

# examples/ as an outside project, against the shared and the static runtime.
set(database "${WORK_DIR}/gemm.db")
file(COPY_FILE "${GEMM_DB}" "${database}")
set(ENV{CUDA_VISIBLE_DEVICES} "")
foreach(form shared static)
  set(build "${WORK_DIR}/examples-${form}")
  set(static_flag OFF)
  if(form STREQUAL "static")
    set(static_flag ON)
  endif()
  run_checked("configure examples/ (${form})" ${CMAKE_COMMAND} -S "${SOURCE_DIR}/examples"
    -B "${build}" -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_PREFIX_PATH=${prefix}
    -DSWR_EXAMPLES_STATIC=${static_flag})
  run_checked("build examples/ (${form})" ${CMAKE_COMMAND} --build "${build}")
  set(gemm_example "${build}/swr_gemm_example")

  run_checked("swr_gemm_example (${form}) lookup" "${gemm_example}" --db "${database}" --gpu h200
    --size 4096)
  require_match("${run_output}" "lookup: (exact|nearest), variant " "swr_gemm_example (${form})")
  # A bad path is a UsageError thrown inside the library and caught by the program: exit 2.
  execute_process(COMMAND "${build}/swr_attention_example" --db "${WORK_DIR}/missing.db"
    --gpu h200 RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 2)
    message(FATAL_ERROR "swr_attention_example (${form}) on a missing file: exit ${code}, "
                        "expected 2:\n${out}${err}")
  endif()
  require_match("${err}" "missing.db" "swr_attention_example (${form}) error")

  file(SIZE "${gemm_example}" size)
  message(STATUS "swr_gemm_example linked against the ${form} runtime: ${size} bytes")
endforeach()

# README's C++ snippet, verbatim, as a project of its own that sets no C++ standard: the exported
# swr::runtime must carry the one its headers need. The ```cmake block that calls find_package(swr)
# is the project's CMakeLists.txt (after the two lines every project starts with), the ```cpp
# block that includes swr/tuned_catalog.hpp its main.cpp; it looks up a GEMM in the database.
file(READ "${SOURCE_DIR}/README.md" readme)
string(REGEX MATCH "```cmake\n([^`]*find_package\\(swr CONFIG REQUIRED\\)[^`]*)```" cmake_block
  "${readme}")
set(snippet_cmake "${CMAKE_MATCH_1}")
string(REGEX MATCH "```cpp\n([^`]*#include <swr/tuned_catalog.hpp>[^`]*)```" cpp_block "${readme}")
set(snippet_cpp "${CMAKE_MATCH_1}")
if(snippet_cmake STREQUAL "" OR snippet_cpp STREQUAL "")
  message(FATAL_ERROR "README.md lacks the C++ snippet (a ```cmake block with "
                      "find_package(swr CONFIG REQUIRED), a ```cpp block with swr/tuned_catalog.hpp)")
endif()
if(snippet_cmake MATCHES "CXX_STANDARD|cxx_std_")
  message(FATAL_ERROR "README's snippet sets a C++ standard itself:\n${snippet_cmake}")
endif()
set(consumer_source "${WORK_DIR}/readme-consumer")
file(WRITE "${consumer_source}/CMakeLists.txt"
  "cmake_minimum_required(VERSION 3.25)\nproject(app LANGUAGES CXX)\n${snippet_cmake}")
file(WRITE "${consumer_source}/main.cpp" "${snippet_cpp}")
run_checked("configure README's consumer" ${CMAKE_COMMAND} -S "${consumer_source}"
  -B "${WORK_DIR}/readme-consumer-build" -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_PREFIX_PATH=${prefix})
run_checked("build README's consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}/readme-consumer-build")
run_checked("README's consumer" "${WORK_DIR}/readme-consumer-build/app" "${database}")
require_match("${run_output}" "^m[0-9]+n[0-9]+|^wgmma|^mma" "README's consumer lookup")

# The shared example finds libswr_runtime.so in the prefix.
execute_process(COMMAND ldd "${WORK_DIR}/examples-shared/swr_gemm_example" OUTPUT_VARIABLE ldd)
require_match("${ldd}" "libswr_runtime.so[^\n]*=> ${prefix}/lib/" "ldd swr_gemm_example")
execute_process(COMMAND ldd "${WORK_DIR}/examples-static/swr_gemm_example" OUTPUT_VARIABLE ldd)
if(ldd MATCHES "libswr_runtime")
  message(FATAL_ERROR "the static example needs libswr_runtime.so:\n${ldd}")
endif()

# pkg-config, and a plain C program built with nothing else.
if(PKG_CONFIG AND C_COMPILER)
  set(ENV{PKG_CONFIG_PATH} "${prefix}/lib/pkgconfig")
  run_checked("pkg-config" "${PKG_CONFIG}" --cflags --libs swr)
  string(STRIP "${run_output}" flags)
  require_match("${flags}" "-I${prefix}/lib/pkgconfig/../../include" "pkg-config --cflags")
  require_match("${flags}" "-lswr_runtime" "pkg-config --libs")
  separate_arguments(flag_list UNIX_COMMAND "${flags}")
  set(consumer "${WORK_DIR}/c_consumer")
  run_checked("cc c_consumer.c" "${C_COMPILER}" -std=c11 -Wall -Wextra -Werror -pedantic
    "${SOURCE_DIR}/tests/install/c_consumer.c" -o "${consumer}" ${flag_list}
    "-Wl,-rpath,${prefix}/lib")
  run_checked("c_consumer" "${consumer}" "${database}")
  require_match("${run_output}" "\"match\":\"exact\"" "c_consumer lookup")
  execute_process(COMMAND "${consumer}" "${WORK_DIR}/missing.db" RESULT_VARIABLE code
    OUTPUT_VARIABLE out)
  if(NOT code EQUAL 2)
    message(FATAL_ERROR "c_consumer on a missing file: exit ${code}, expected 2: ${out}")
  endif()
  require_match("${out}" "^invalid argument: .*missing.db" "c_consumer error")
endif()

foreach(file lib/libswr_runtime.so lib/libswr_runtime.a lib/libswr_db.a lib/libswr_generator.a
        lib/libswr_driver.a lib/libswr_support.a)
  file(SIZE "${prefix}/${file}" size)
  message(STATUS "${file}: ${size} bytes")
endforeach()
