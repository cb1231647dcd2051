// The measurement workers: `swr-tune __measure-worker` (attention), `swr-tune
// __measure-gemm-worker` (GEMM; its requests carry "family": "gemm") and `swr-tune
// __measure-attention-backward-worker` ("family": "attention-backward"), started by WorkerClient.
// Each opens the device, says "ready", then measures one variant per request line
// (worker_protocol.hpp) until it is told to quit or its stdin closes.
// When a variant kills the CUDA context it reports the fault and exits, and the tuner starts a
// fresh worker for the next variant.
#pragma once

namespace swr {

// Exit codes: 0 after quit or end of input, 1 when the device could not be opened, 2 for a
// request it cannot read, 3 after a variant killed the context.
int run_measurement_worker();
int run_gemm_measurement_worker();
int run_attention_backward_measurement_worker();

}  // namespace swr
