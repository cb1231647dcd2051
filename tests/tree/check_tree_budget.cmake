# cmake -DSOURCE_DIR=... -DGIT=... -P check_tree_budget.cmake
#
# What travels to a GPU machine is the tracked tree (a run carries at most 64 MiB), so it has a
# budget: the tracked files under 20 MB, bench/results/ under 10 MB of them. bench/results/ holds
# data only: a README.md in each result folder (naming the command that produced it), no scripts
# or programs (those are kept in bench/archive/), large dumps xz-compressed.
cmake_minimum_required(VERSION 3.25)

set(tree_budget 20000000)
set(results_budget 10000000)

# One name a line, unquoted (core.quotePath=false); a name with ';' would split a CMake list.
execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" -c core.quotePath=false ls-files
  RESULT_VARIABLE code OUTPUT_VARIABLE listing ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "git ls-files failed (${code}): ${err}")
endif()
string(REPLACE ";" "<semicolon>" listing "${listing}")
string(REPLACE "\n" ";" files "${listing}")

set(tree_bytes 0)
set(results_bytes 0)
set(result_folders "")
foreach(file IN LISTS files)
  if(file STREQUAL "")
    continue()
  endif()
  if(file MATCHES "<semicolon>")
    message(FATAL_ERROR "a tracked file name holds ';': ${file}")
  endif()
  if(NOT EXISTS "${SOURCE_DIR}/${file}" OR IS_SYMLINK "${SOURCE_DIR}/${file}")
    continue()  # deleted in the work tree, or a link (its target is counted where it lies)
  endif()
  file(SIZE "${SOURCE_DIR}/${file}" size)
  math(EXPR tree_bytes "${tree_bytes} + ${size}")
  if(file MATCHES "^bench/results/([^/]+)/")
    math(EXPR results_bytes "${results_bytes} + ${size}")
    list(APPEND result_folders "${CMAKE_MATCH_1}")
    if(file MATCHES "\\.(sh|py|c|cpp|query)$")
      message(FATAL_ERROR "bench/results/ holds data only; move ${file} to bench/archive/")
    endif()
  endif()
endforeach()

list(REMOVE_DUPLICATES result_folders)
foreach(folder IN LISTS result_folders)
  if(NOT EXISTS "${SOURCE_DIR}/bench/results/${folder}/README.md")
    message(FATAL_ERROR "bench/results/${folder} has no README.md (what it holds and the command "
                        "that produced it)")
  endif()
endforeach()

message(STATUS "tracked tree: ${tree_bytes} bytes (budget ${tree_budget}); bench/results/: "
               "${results_bytes} bytes (budget ${results_budget})")
if(results_bytes GREATER_EQUAL results_budget)
  message(FATAL_ERROR "bench/results/ is ${results_bytes} bytes, over its budget of "
                      "${results_budget}: compress large dumps with xz -9 or summarise them")
endif()
if(tree_bytes GREATER_EQUAL tree_budget)
  message(FATAL_ERROR "the tracked tree is ${tree_bytes} bytes, over its budget of ${tree_budget}")
endif()
