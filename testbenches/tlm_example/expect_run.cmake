# Runs one program and judges it by its exit status AND its output (CTest's
# PASS_REGULAR_EXPRESSION alone would ignore the exit status):
#   cmake -DPROGRAM=path [-DARG=one-argument] -DEXIT=code -DOUTPUT=regex -P expect_run.cmake
# Passes only if the program exits with exactly EXIT (so a crash or a signal
# never counts as the expected failure) and its stdout+stderr match OUTPUT.
foreach(v PROGRAM EXIT OUTPUT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "expect_run.cmake: -D${v}=... is required")
  endif()
endforeach()
if(DEFINED ARG)
  execute_process(COMMAND "${PROGRAM}" "${ARG}" RESULT_VARIABLE status OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
else()
  execute_process(COMMAND "${PROGRAM}" RESULT_VARIABLE status OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
endif()
message("${out}")
if(NOT status STREQUAL "${EXIT}")
  message(FATAL_ERROR "expected exit status ${EXIT}, got '${status}'")
endif()
if(NOT out MATCHES "${OUTPUT}")
  message(FATAL_ERROR "the output does not match '${OUTPUT}'")
endif()
