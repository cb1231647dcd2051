# The layers and the arrows between them, checked on every source file: a file of a layer may
# include headers of its own layer and of the layers this table allows, nothing above them. The
# runtime and the driver layer, which user programs link, can so never reach the tuner, the model
# or the command line. Run by CTest (tests/layering); `cmake -DSOURCE_DIR=... -P` runs it by hand.
#
cmake_policy(SET CMP0057 NEW)

# layer      may include
set(allowed_support   support)
set(allowed_driver    driver swr support)
set(allowed_generator generator swr templates support)
set(allowed_db        db generator swr support)
set(allowed_runtime   runtime driver db generator swr templates support)
set(allowed_model     model generator swr templates support)
set(allowed_tuner     tuner runtime model db generator driver swr templates support)
set(allowed_report    report model db generator swr support)
set(allowed_cli       cli tuner report runtime model db generator driver swr templates support)
set(allowed_include   swr)
set(layers support driver generator db runtime model tuner report cli include)

if(NOT SOURCE_DIR)
  message(FATAL_ERROR "check_layers.cmake needs -DSOURCE_DIR=<repository root>")
endif()

set(violations "")
set(checked 0)
foreach(layer IN LISTS layers)
  file(GLOB_RECURSE files "${SOURCE_DIR}/${layer}/*.cpp" "${SOURCE_DIR}/${layer}/*.hpp"
       "${SOURCE_DIR}/${layer}/*.h")
  foreach(file IN LISTS files)
    math(EXPR checked "${checked} + 1")
    file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*)\".*" "\\1" header "${line}")
      string(FIND "${header}" "/" slash)
      if(slash EQUAL -1)
        continue()  # a header beside the file (examples of a layer's own folder)
      endif()
      string(SUBSTRING "${header}" 0 ${slash} target_layer)
      if(NOT target_layer IN_LIST allowed_${layer})
        file(RELATIVE_PATH relative "${SOURCE_DIR}" "${file}")
        list(APPEND violations "${relative} includes ${header} (${layer} may include: ${allowed_${layer}})")
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations)
  list(LENGTH violations count)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "${count} include(s) point up or sideways across the layers:\n  ${text}")
endif()
message(STATUS "layering holds: ${checked} files of ${layers}")
