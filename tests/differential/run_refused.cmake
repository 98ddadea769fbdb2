# Compiles one snippet of tests/differential/refused/ (see CMakeLists.txt):
# as written it must fail, with the error its first line names ("// expect:
# REGEX"); with -DAS_LIBTORCH_TAKES_IT it must compile. -DINCLUDES is the
# include flags of the side under test (the engine, or LibTorch with
# -DSTANDARD=17); -DCONTROL=OFF skips the second compile, and -DREGEX=OFF the
# check of the error's words (LibTorch's own are its own).
file(STRINGS ${SNIPPET} first LIMIT_COUNT 1)
string(REGEX REPLACE "^// expect: " "" expected "${first}")
separate_arguments(flags UNIX_COMMAND "${INCLUDES}")
execute_process(COMMAND ${COMPILER} -std=c++${STANDARD} -fsyntax-only ${flags} ${SNIPPET}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SNIPPET} compiled, but LibTorch 1.13 refuses it")
endif()
if(NOT REGEX STREQUAL "OFF" AND NOT "${out}${err}" MATCHES "${expected}")
  message(FATAL_ERROR "${SNIPPET} failed without the expected error (${expected}):\n${err}")
endif()
if(NOT CONTROL STREQUAL "OFF")
  execute_process(COMMAND ${COMPILER} -std=c++${STANDARD} -fsyntax-only -DAS_LIBTORCH_TAKES_IT ${flags} ${SNIPPET}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${SNIPPET} with the spelling LibTorch takes did not compile:\n${err}")
  endif()
endif()
