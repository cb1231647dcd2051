# The checked-in wgmma wrappers (templates/common/sm90/wgmma_*.cuh) are what
# scripts/generate_wgmma.py writes today: regenerate into a temporary folder and compare each file,
# so that an edit by hand or a change to the generator without regenerating fails here.
#
# cmake -DSOURCE_DIR=<repo> -DPYTHON=<python3> -DWORK_DIR=<scratch folder> -P check_wgmma_generated.cmake
cmake_policy(VERSION 3.25)
if(NOT SOURCE_DIR OR NOT PYTHON OR NOT WORK_DIR)
  message(FATAL_ERROR "check_wgmma_generated.cmake needs -DSOURCE_DIR, -DPYTHON and -DWORK_DIR")
endif()

file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(
  COMMAND "${PYTHON}" "${SOURCE_DIR}/scripts/generate_wgmma.py" --out "${WORK_DIR}"
  RESULT_VARIABLE generator_status OUTPUT_QUIET)
if(NOT generator_status EQUAL 0)
  message(FATAL_ERROR "scripts/generate_wgmma.py failed: ${generator_status}")
endif()

file(GLOB generated RELATIVE "${WORK_DIR}" "${WORK_DIR}/*.cuh")
list(LENGTH generated generated_count)
if(generated_count EQUAL 0)
  message(FATAL_ERROR "scripts/generate_wgmma.py wrote no .cuh into ${WORK_DIR}")
endif()
# Every generated file is checked in unchanged, and no stale generated file is left beside them.
file(GLOB checked_in RELATIVE "${SOURCE_DIR}/templates/common/sm90"
     "${SOURCE_DIR}/templates/common/sm90/wgmma_*.cuh")
foreach(name IN LISTS generated)
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -E compare_files "${WORK_DIR}/${name}"
            "${SOURCE_DIR}/templates/common/sm90/${name}"
    RESULT_VARIABLE differs)
  if(NOT differs EQUAL 0)
    message(FATAL_ERROR "templates/common/sm90/${name} differs from what scripts/generate_wgmma.py "
                        "writes: run python3 scripts/generate_wgmma.py")
  endif()
endforeach()
foreach(name IN LISTS checked_in)
  if(NOT name IN_LIST generated)
    message(FATAL_ERROR "templates/common/sm90/${name} is not written by scripts/generate_wgmma.py "
                        "(a stale generated file?)")
  endif()
endforeach()
message(STATUS "${generated_count} generated wgmma headers match the checked-in ones")
