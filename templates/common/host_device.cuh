// How a function that runs on both sides is declared: the schedules and launch arguments are
// compiled by NVRTC for the kernels and by the host compiler for the generator, the model, the
// runtime and their tests, so that both sides run the same code.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define SWR_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define SWR_HOST_DEVICE inline
#endif
