# Builds one man page from scdoc sources: concatenates INPUTS (a |-separated
# list, in order) and runs SCDOC on them, writing OUTPUT. Run with cmake -P.
set(text "")
string(REPLACE "|" ";" INPUTS "${INPUTS}")
foreach(input IN LISTS INPUTS)
  file(READ "${input}" part)
  string(APPEND text "${part}")
endforeach()
file(WRITE "${OUTPUT}.scd" "${text}")
execute_process(COMMAND "${SCDOC}" INPUT_FILE "${OUTPUT}.scd" OUTPUT_FILE "${OUTPUT}.tmp"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  file(REMOVE "${OUTPUT}.tmp")
  message(FATAL_ERROR "scdoc failed on ${INPUTS}: ${err}")
endif()
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
