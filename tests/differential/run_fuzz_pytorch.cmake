# The fuzzer's programs on PyTorch: the engine build writes them as Python,
# Debian's python3-torch runs them (fuzz_pytorch.py), the engine runs them
# itself, and compare.cpp holds the two to each other.
file(MAKE_DIRECTORY ${WORKDIR})
execute_process(COMMAND ${ENGINE} --seed ${SEED} --python OUTPUT_FILE ${WORKDIR}/programs.py RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the fuzzer could not write its programs (${rc})")
endif()
execute_process(COMMAND ${PYTHON} ${RUNNER} INPUT_FILE ${WORKDIR}/programs.py OUTPUT_FILE ${WORKDIR}/facts-PYTORCH.jsonl
                ERROR_FILE ${WORKDIR}/facts-PYTORCH.stderr RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(READ ${WORKDIR}/facts-PYTORCH.stderr err)
  message(FATAL_ERROR "PyTorch's run of the programs failed (${rc}):\n${err}")
endif()
execute_process(COMMAND ${ENGINE} --seed ${SEED} OUTPUT_FILE ${WORKDIR}/facts-ENGINE.jsonl RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the engine's run of the programs failed (${rc})")
endif()
execute_process(COMMAND ${COMPARE} ${WORKDIR}/facts-ENGINE.jsonl ${WORKDIR}/facts-PYTORCH.jsonl RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the engine and PyTorch disagree (see above)")
endif()
