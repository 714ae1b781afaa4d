# Two ways of using jitx without installing it, run against the already-built tree (cheap: no second library build).
# 1. add_subdirectory: configures tests/subdir_consumer (add_subdirectory on the source tree), checks that jitx's
#    tests/examples/benchmarks are off by default there, compiles the consumer's object (the /fast target skips
#    building a second libjitx), then links it against BUILD_DIR's libjitx.so.
# 2. a plain compiler command line: c++ -std=c++20 -I include main.cpp -L build -ljitx -lfmt.
set(cbuild "${BUILD_DIR}/subdir-test")
file(REMOVE_RECURSE "${cbuild}")
file(MAKE_DIRECTORY "${cbuild}")
set(main "${SOURCE_DIR}/tests/install_consumer/main.cpp")
execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/subdir_consumer" -B "${cbuild}/sub" -G "Unix Makefiles"
                        "-DJITX_SOURCE_DIR=${SOURCE_DIR}" -DCMAKE_BUILD_TYPE=Release RESULT_VARIABLE r)
if(r)
  message(FATAL_ERROR "configuring the add_subdirectory consumer failed")
endif()
file(READ "${cbuild}/sub/CMakeCache.txt" cache)
foreach(opt TESTS EXAMPLES BENCHMARKS)
  if(NOT cache MATCHES "JITX_BUILD_${opt}:BOOL=OFF")
    message(FATAL_ERROR "JITX_BUILD_${opt} is not OFF under add_subdirectory")
  endif()
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${cbuild}/sub" --target consumer/fast RESULT_VARIABLE r2)
file(GLOB_RECURSE obj "${cbuild}/sub/CMakeFiles/consumer.dir/*main.cpp.o")
if(NOT obj)
  message(FATAL_ERROR "compiling the add_subdirectory consumer failed")
endif()
execute_process(COMMAND ${CXX} ${obj} -o "${cbuild}/sub_consumer" -L${LIB_DIR} -ljitx -lfmt -pthread
                        -Wl,-rpath,${LIB_DIR} RESULT_VARIABLE r)
if(r)
  message(FATAL_ERROR "linking the add_subdirectory consumer failed")
endif()
execute_process(COMMAND "${cbuild}/sub_consumer" RESULT_VARIABLE r)
if(r)
  message(FATAL_ERROR "the add_subdirectory consumer returned ${r}")
endif()
execute_process(COMMAND ${CXX} -std=c++20 -O1 -I${SOURCE_DIR}/include ${main} -o "${cbuild}/cli_consumer"
                        -L${LIB_DIR} -ljitx -lfmt -pthread -Wl,-rpath,${LIB_DIR} RESULT_VARIABLE r)
if(r)
  message(FATAL_ERROR "the plain command-line build failed")
endif()
execute_process(COMMAND "${cbuild}/cli_consumer" RESULT_VARIABLE r)
if(r)
  message(FATAL_ERROR "the command-line consumer returned ${r}")
endif()
