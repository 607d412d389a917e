// qf.sample alone, for SampleGpuTest.cpp (vocabulary 997; params [?, 8],
// penalty_mask [?, 997]). Compiled into artifacts/sampling/ by the CMake
// target qfuse-sample-artifacts.
func.func @sample(%logits: tensor<?x997xf16> {qf.name = "logits"},
                  %params: tensor<?x8xi32> {qf.name = "params"},
                  %mask: tensor<?x997xi8> {qf.name = "mask"},
                  %counters: tensor<?xi32> {qf.name = "counters"})
    -> (tensor<?xi32> {qf.name = "ids"}) {
  %ids = qf.sample %logits, %params, %mask, %counters : tensor<?x997xf16>, tensor<?x8xi32>, tensor<?x997xi8>, tensor<?xi32> -> tensor<?xi32>
  return %ids : tensor<?xi32>
}
