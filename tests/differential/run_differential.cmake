# Runs both builds of facts.cpp and compares what they print.
# With -DRECORDED=FILE instead of -DLIBTORCH, the engine's output is compared
# with facts recorded from LibTorch earlier.
file(MAKE_DIRECTORY ${WORKDIR})
set(sides ENGINE)
if(DEFINED LIBTORCH)
  list(APPEND sides LIBTORCH)
else()
  configure_file(${RECORDED} ${WORKDIR}/facts-LIBTORCH.jsonl COPYONLY)
endif()
foreach(side ${sides})
  execute_process(COMMAND ${${side}} OUTPUT_FILE ${WORKDIR}/facts-${side}.jsonl
                  ERROR_FILE ${WORKDIR}/facts-${side}.stderr RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    file(READ ${WORKDIR}/facts-${side}.stderr err)
    message(FATAL_ERROR "the ${side} build of ${WORKDIR} failed (${rc}):\n${err}")
  endif()
endforeach()
execute_process(COMMAND ${COMPARE} ${WORKDIR}/facts-ENGINE.jsonl ${WORKDIR}/facts-LIBTORCH.jsonl RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the engine and LibTorch disagree (see above)")
endif()
