# The GPU tests on qfuse-sim (sim/, docs/gpu-sim.md), in the `unit` label:
# the CUDA driver, cuBLAS and cuSOLVER on the CPU, so that the kernels these
# tests launch run everywhere CI runs. Not in the sanitize build, which
# leaves the GPU test binaries out. No skip marker: on the simulator a
# device is always there, and a test whose artifacts are missing skips
# inside the binary without failing it.
#
# Entries that ctest runs side by side:
# - qfuse-runtime-gpu-tests-on-sim: every test that needs no compiled
#   artifact beyond the sampler and act_order ones, less those that take a
#   minute or more on the CPU (the sampler's statistics and large
#   vocabulary, the GPTQ act-order solves, the benchmark loop);
# - qfuse-runtime-gpu-tests-on-sim-artifacts-*: the tests of the artifacts a
#   GPU round carries (the quantize kernels, the formats matvecs, the fp16
#   tiny Llama, the GPTQ test models' block kernels), compiled here into
#   sim-artifacts/ as the bench scripts compile them
#   (bench/quantize-at-load/make-artifacts.sh, bench/make-artifacts.sh,
#   bench/make-model-artifacts.sh, bench/make-gptq-artifacts.sh). A skipped
#   test there fails its entry: every input is built, and a device is
#   always there.
if(NOT TARGET qfuse_sim_cuda OR QFUSE_SANITIZE)
  return()
endif()

set(slow_on_sim "*SampleGpu.FrequenciesPassChiSquare*"
  "*SampleGpu.SameTokensAsTheHost/2" "GptqActOrderGpu.*" "Gpu.BenchmarksRun")
# In three shards of one to two minutes each on the CPU, which ctest runs
# beside the rest (one entry was the suite's last by minutes).
set(quantize_shard "QuantizeGpuTest.*" "DeviceGatherGpuTest.*"
  "OddWidthGatherGpuTest.*" "KeptValuesGpuTest.*" "DeviceHalfRoundGpuTest.*"
  "DeviceWidenGpuTest.*" "CalibrationGpu.*" "BackgroundLoadGpu.*")
set(gptq_shard "GptqDeviceWeightsGpu.*")
set(formats_shard "Gpu.MatVecActOrderMatchesTheReference"
  "Gpu.MatVecSparse24IntegersMatchTheReference"
  "Gpu.MatVecCodebooksOfOtherWidthsMatchTheReference")
set(with_artifacts ${quantize_shard} ${gptq_shard} ${formats_shard})
find_program(QFUSE_SIM_PYTHON3 python3)
set(compile_artifacts OFF)
if(QFUSE_ENABLE_COMPILER AND QFUSE_SIM_PYTHON3)
  set(compile_artifacts ON)
endif()

set(left_out ${slow_on_sim})
if(compile_artifacts)
  list(APPEND left_out ${with_artifacts})
endif()
list(JOIN left_out ":" left_out)
add_test(NAME qfuse-runtime-gpu-tests-on-sim
  COMMAND qfuse-runtime-gpu-tests --gtest_filter=-${left_out})
set_tests_properties(qfuse-runtime-gpu-tests-on-sim PROPERTIES
  LABELS unit
  COST 100
  ENVIRONMENT "LD_LIBRARY_PATH=${QFUSE_SIM_LIB_DIR}")
add_dependencies(QFuseUnitTests qfuse_sim_cuda qfuse_sim_cublas
  qfuse_sim_cusolver)
foreach(artifacts qfuse-act-order-artifacts qfuse-sample-artifacts)
  if(TARGET ${artifacts})
    add_dependencies(QFuseUnitTests ${artifacts})
  endif()
endforeach()

if(NOT compile_artifacts)
  return()
endif()
set(dir ${CMAKE_CURRENT_BINARY_DIR}/sim-artifacts)
set(compile $<TARGET_FILE:qfuse-compile>)
set(quantize_input
  ${PROJECT_SOURCE_DIR}/test/Tools/qfuse-cpu-check/Inputs/quantize-formats.mlir)
set(formats_input
  ${PROJECT_SOURCE_DIR}/test/Tools/qfuse-compile/Inputs/formats.mlir)
add_custom_command(
  OUTPUT ${dir}/quantize-formats.qfa
  COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
  COMMAND ${compile} ${quantize_input} --fuse=none --chip=sm_80,sm_90,sm_90a
          -o ${dir}/quantize-formats.qfa > ${dir}/quantize-formats.log 2>&1
  DEPENDS qfuse-compile ${quantize_input}
  COMMENT "qfuse-compile: the quantize kernels, for the GPU tests on the simulator")
add_custom_command(
  OUTPUT ${dir}/formats.qfa
  COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
  COMMAND ${compile} ${formats_input} --batch-sizes=1,2,4,8
          -o ${dir}/formats.qfa > ${dir}/formats.log 2>&1
  DEPENDS qfuse-compile ${formats_input}
  COMMENT "qfuse-compile: the formats matvecs, for the GPU tests on the simulator")
set(tiny ${dir}/tiny-llama)
add_custom_command(
  OUTPUT ${dir}/tiny-llama-fp16.qfa
  COMMAND $<TARGET_FILE:qfuse-synthetic-model> --config-preset tiny-llama
          --out ${tiny} --seed 1 > ${dir}/tiny-llama.log
  COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${PROJECT_SOURCE_DIR}/python-frontend
          ${QFUSE_SIM_PYTHON3} -m qfuse emit --batch dynamic
          --config ${tiny}/config.json --encoding fp16 --max-seq 256
          -o ${dir}/tiny-llama-fp16.mlir
  COMMAND ${compile} --tuning-db=${PROJECT_SOURCE_DIR}/bench/tuning-db.json
          ${dir}/tiny-llama-fp16.mlir --batch-sizes=1,8
          -o ${dir}/tiny-llama-fp16.qfa
  DEPENDS qfuse-compile qfuse-synthetic-model
  COMMENT "qfuse-compile: the fp16 tiny Llama, for the GPU tests on the simulator")
set(gptq ${dir}/gptq)
add_custom_command(
  OUTPUT ${gptq}/test-int4-g128.qfa
  COMMAND ${CMAKE_COMMAND} -E env GPTQ_OUT=${gptq} GPTQ_TESTS_ONLY=1
          QFUSE_BUILD_DIR=${CMAKE_BINARY_DIR}
          bash ${PROJECT_SOURCE_DIR}/bench/make-gptq-artifacts.sh
          > ${dir}/gptq.log 2>&1
  DEPENDS qfuse-compile ${PROJECT_SOURCE_DIR}/bench/make-gptq-artifacts.sh
  COMMENT "qfuse compile-gptq: the GPTQ test models, for the GPU tests on the simulator")
add_custom_target(qfuse-sim-test-artifacts DEPENDS ${dir}/quantize-formats.qfa
  ${dir}/formats.qfa ${dir}/tiny-llama-fp16.qfa ${gptq}/test-int4-g128.qfa)
add_dependencies(QFuseUnitTests qfuse-sim-test-artifacts)

foreach(shard quantize gptq formats)
  list(JOIN ${shard}_shard ":" filter)
  set(name qfuse-runtime-gpu-tests-on-sim-artifacts-${shard})
  add_test(NAME ${name} COMMAND qfuse-runtime-gpu-tests --gtest_filter=${filter})
  set_tests_properties(${name} PROPERTIES
    LABELS unit
    COST 100 # start early: a minute or two each
    # A skip here means an input did not reach the test (or no test ran):
    # fail instead.
    FAIL_REGULAR_EXPRESSION "\\[  SKIPPED \\]|\\[  PASSED  \\] 0 tests"
    ENVIRONMENT "LD_LIBRARY_PATH=${QFUSE_SIM_LIB_DIR};QFUSE_QUANTIZE_QFA=${dir}/quantize-formats.qfa;QFUSE_FORMATS_QFA=${dir}/formats.qfa;QFUSE_CALIBRATION_QFA=${dir}/tiny-llama-fp16.qfa;QFUSE_GPTQ_ARTIFACTS=${gptq}")
endforeach()
