# Runs both builds of facts.cpp and compares what they print.
file(MAKE_DIRECTORY ${WORKDIR})
foreach(side ENGINE LIBTORCH)
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
