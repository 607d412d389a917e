// qf.sample alone, for SampleGpuTest.cpp (vocabulary 151936; params [1, 8],
// penalty_mask [1, 151936]). Compiled into artifacts/sampling/ by the CMake
// target qfuse-sample-artifacts.
func.func @sample(%logits: tensor<?x151936xf16> {qf.name = "logits"},
                  %params: tensor<1x8xi32> {qf.name = "params"},
                  %mask: tensor<1x151936xi8> {qf.name = "mask"},
                  %counters: tensor<?xi32> {qf.name = "counters"})
    -> (tensor<?xi32> {qf.name = "ids"}) {
  %ids = qf.sample %logits, %params, %mask, %counters : tensor<?x151936xf16>, tensor<1x8xi32>, tensor<1x151936xi8>, tensor<?xi32> -> tensor<?xi32>
  return %ids : tensor<?xi32>
}
