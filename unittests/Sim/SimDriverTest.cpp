//===- SimDriverTest.cpp - the stand-in libcuda's streams and memory ------===//
//
// The simulated driver (sim/driver) as the runtime uses it: allocations
// poisoned and bounds-checked, copies and sets, work recorded while a
// stream is captured and run when the graph is launched (cuBLAS's too),
// no waiting for the device on a capturing thread,
// PTX modules loaded and launched, cubins refused, and a kernel that
// writes past its buffer failing the launch with a sticky error.
//
//===----------------------------------------------------------------------===//

#include <cublas_v2.h>
#include <cuda.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

// A kernel that writes out[i] = i * 3 + k for i < n.
const char *kFillPtx = R"(
.version 8.0
.target sm_90
.address_size 64

.visible .entry fill(
	.param .u64 fill_param_0,
	.param .u32 fill_param_1,
	.param .u32 fill_param_2
)
.maxntid 128, 1, 1
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<5>;

	ld.param.b64 	%rd1, [fill_param_0];
	ld.param.b32 	%r1, [fill_param_1];
	ld.param.b32 	%r2, [fill_param_2];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r6, %r3, %r4, %r5;
	setp.ge.s32 	%p1, %r6, %r1;
	@%p1 bra 	$L__BB0_2;
	mad.lo.s32 	%r7, %r6, 3, %r2;
	mul.wide.s32 	%rd2, %r6, 4;
	add.s64 	%rd3, %rd1, %rd2;
	st.global.b32 	[%rd3], %r7;
$L__BB0_2:
	ret;
}
)";

class SimDriver : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    CUdevice device;
    ASSERT_EQ(cuDeviceGet(&device, 0), CUDA_SUCCESS);
    CUcontext context;
    ASSERT_EQ(cuDevicePrimaryCtxRetain(&context, device), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSetCurrent(context), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  }
  void TearDown() override { cuStreamDestroy(stream); }

  std::vector<int> read(CUdeviceptr p, size_t count) {
    std::vector<int> values(count);
    EXPECT_EQ(cuMemcpyDtoH(values.data(), p, count * 4), CUDA_SUCCESS);
    return values;
  }

  CUfunction loadFill(CUmodule &module) {
    EXPECT_EQ(cuModuleLoadData(&module, kFillPtx), CUDA_SUCCESS);
    CUfunction fill = nullptr;
    EXPECT_EQ(cuModuleGetFunction(&fill, module, "fill"), CUDA_SUCCESS);
    return fill;
  }

  CUstream stream = nullptr;
};

TEST_F(SimDriver, DescribesAnH200) {
  int major = 0, minor = 0, sms = 0;
  ASSERT_EQ(cuDeviceGetAttribute(
                &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0),
            CUDA_SUCCESS);
  cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0);
  cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0);
  EXPECT_EQ(major, 9);
  EXPECT_EQ(minor, 0);
  EXPECT_EQ(sms, 132);
  char name[128];
  ASSERT_EQ(cuDeviceGetName(name, sizeof name, 0), CUDA_SUCCESS);
  EXPECT_NE(std::string(name).find("qfuse-sim"), std::string::npos);
}

TEST_F(SimDriver, NewMemoryIsPoisonedAndCopiesAreChecked) {
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAlloc(&p, 64), CUDA_SUCCESS);
  EXPECT_EQ(p % 256, 0u);
  for (int v : read(p, 16))
    EXPECT_EQ(v, -1);
  std::vector<int> host(17, 5);
  EXPECT_EQ(cuMemcpyHtoD(p, host.data(), 68), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpyHtoD(p, host.data(), 64), CUDA_SUCCESS);
  EXPECT_EQ(read(p, 16), std::vector<int>(16, 5));
  EXPECT_EQ(cuMemsetD32Async(p + 8, 7, 2, stream), CUDA_SUCCESS);
  EXPECT_EQ(cuMemsetD8Async(p + 60, 1, 4, stream), CUDA_SUCCESS);
  std::vector<int> values = read(p, 16);
  EXPECT_EQ(values[1], 5);
  EXPECT_EQ(values[2], 7);
  EXPECT_EQ(values[3], 7);
  EXPECT_EQ(values[4], 5);
  EXPECT_EQ(values[15], 0x01010101);
  EXPECT_EQ(cuMemFree(p), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(p), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(SimDriver, CapturedWorkRunsWhenTheGraphIsLaunched) {
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAlloc(&p, 16), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD32Async(p, 1, 4, stream), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
            CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD32Async(p, 2, 4, stream), CUDA_SUCCESS);
  CUgraph graph = nullptr;
  ASSERT_EQ(cuStreamEndCapture(stream, &graph), CUDA_SUCCESS);
  EXPECT_EQ(read(p, 4), std::vector<int>(4, 1));
  size_t nodes = 0;
  ASSERT_EQ(cuGraphGetNodes(graph, nullptr, &nodes), CUDA_SUCCESS);
  EXPECT_EQ(nodes, 1u);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiate(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(exec, stream), CUDA_SUCCESS);
  EXPECT_EQ(read(p, 4), std::vector<int>(4, 2));
  cuGraphExecDestroy(exec);
  cuGraphDestroy(graph);
  cuMemFree(p);
}

TEST_F(SimDriver, ACapturingThreadCannotWaitForTheDevice) {
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAlloc(&p, 16), CUDA_SUCCESS);
  int host[4] = {1, 2, 3, 4};
  ASSERT_EQ(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
            CUDA_SUCCESS);
  EXPECT_EQ(cuCtxSynchronize(), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_EQ(cuMemcpyHtoD(p, host, sizeof(host)),
            CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_EQ(cuMemcpyDtoH(host, p, sizeof(host)),
            CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  CUgraph graph = nullptr;
  ASSERT_EQ(cuStreamEndCapture(stream, &graph), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(cuMemcpyHtoD(p, host, sizeof(host)), CUDA_SUCCESS);
  cuGraphDestroy(graph);
  cuMemFree(p);
}

TEST_F(SimDriver, CapturedCublasRunsWhenTheGraphIsLaunched) {
  // C = A * B with 1x1 matrices of f32: 3 * 4.
  CUdeviceptr a, b, c;
  ASSERT_EQ(cuMemAlloc(&a, 4), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc(&b, 4), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc(&c, 4), CUDA_SUCCESS);
  float three = 3, four = 4, zero = 0, one = 1, result = 0;
  cuMemcpyHtoD(a, &three, 4);
  cuMemcpyHtoD(b, &four, 4);
  cuMemcpyHtoD(c, &zero, 4);
  cublasHandle_t handle;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasSetStream(handle, stream), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
            CUDA_SUCCESS);
  ASSERT_EQ(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one,
                        reinterpret_cast<float *>(a), 1,
                        reinterpret_cast<float *>(b), 1, &zero,
                        reinterpret_cast<float *>(c), 1),
            CUBLAS_STATUS_SUCCESS);
  CUgraph graph = nullptr;
  ASSERT_EQ(cuStreamEndCapture(stream, &graph), CUDA_SUCCESS);
  cuMemcpyDtoH(&result, c, 4);
  EXPECT_EQ(result, 0.0f);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiate(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(exec, stream), CUDA_SUCCESS);
  cuMemcpyDtoH(&result, c, 4);
  EXPECT_EQ(result, 12.0f);
  cuGraphExecDestroy(exec);
  cuGraphDestroy(graph);
  cublasDestroy(handle);
}

TEST_F(SimDriver, LaunchesPtxAndRefusesCubins) {
  CUmodule module = nullptr;
  CUfunction fill = loadFill(module);
  ASSERT_NE(fill, nullptr);
  int maxThreads = 0;
  cuFuncGetAttribute(&maxThreads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                     fill);
  EXPECT_EQ(maxThreads, 128);
  CUdeviceptr out = 0;
  const int n = 300, k = 11;
  ASSERT_EQ(cuMemAlloc(&out, n * 4), CUDA_SUCCESS);
  void *params[] = {&out, const_cast<int *>(&n), const_cast<int *>(&k)};
  ASSERT_EQ(cuLaunchKernel(fill, 3, 1, 1, 128, 1, 1, 0, stream, params,
                           nullptr),
            CUDA_SUCCESS);
  std::vector<int> values = read(out, n);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(values[i], i * 3 + k) << i;
  EXPECT_EQ(cuLaunchKernel(fill, 1, 1, 1, 256, 1, 1, 0, stream, params,
                           nullptr),
            CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
  CUmodule cubin = nullptr;
  const char elf[] = "\x7f" "ELF\x02\x01\x01";
  EXPECT_EQ(cuModuleLoadData(&cubin, elf), CUDA_ERROR_NO_BINARY_FOR_GPU);
  char log[256] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values2[] = {log, reinterpret_cast<void *>(sizeof log)};
  EXPECT_EQ(cuModuleLoadDataEx(&cubin, ".version 8.0\n.target sm_90\nbogus;",
                               2, options, values2),
            CUDA_ERROR_INVALID_PTX);
  EXPECT_NE(std::string(log).find("qfuse-sim"), std::string::npos) << log;
  cuModuleUnload(module);
  cuMemFree(out);
}

TEST_F(SimDriver, AWriteOutOfBoundsFailsTheLaunchAndSticks) {
  CUmodule module = nullptr;
  CUfunction fill = loadFill(module);
  CUdeviceptr out = 0;
  const int n = 65, k = 0; // one more than the buffer holds
  ASSERT_EQ(cuMemAlloc(&out, 64 * 4), CUDA_SUCCESS);
  void *params[] = {&out, const_cast<int *>(&n), const_cast<int *>(&k)};
  EXPECT_EQ(cuLaunchKernel(fill, 1, 1, 1, 128, 1, 1, 0, stream, params,
                           nullptr),
            CUDA_ERROR_LAUNCH_FAILED);
  EXPECT_EQ(cuStreamSynchronize(stream), CUDA_ERROR_LAUNCH_FAILED);
  CUdeviceptr more = 0;
  EXPECT_EQ(cuMemAlloc(&more, 4), CUDA_ERROR_LAUNCH_FAILED);
  EXPECT_EQ(cuMemFree(out), CUDA_SUCCESS);
  EXPECT_EQ(cuModuleUnload(module), CUDA_SUCCESS);
}

} // namespace
