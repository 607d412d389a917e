// Programmatic dependent launch: on sm_90 and later every generated kernel
// starts with griddepcontrol.wait (before any load or store), and the
// artifact marks it `grid_dependency`, which tells the runtime to launch it
// as a programmatic dependent of the kernel before it; with
// --grid-dependency-trigger=start, griddepcontrol.launch_dependents comes
// first (measured slower, docs/artifact.md); =late puts it after the main
// loop (the matvec marks it) or before the first global store. With
// --grid-dependency-prefetch the matvec and the tensor-core kernel ask L2 for
// their first weights before the wait. sm_80 has no griddepcontrol (nor the
// bulk prefetch);
// --grid-dependency=false leaves them out.
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --batch-sizes=1,16 --emit=ptx -o - 2>/dev/null | FileCheck %s --check-prefix=PTX
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --batch-sizes=1,16 --grid-dependency-trigger=start --emit=ptx -o - 2>/dev/null | FileCheck %s --check-prefix=TRIG
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --batch-sizes=1,16 --grid-dependency-trigger=late --emit=ptx -o - 2>/dev/null | FileCheck %s --check-prefix=LATE
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --batch-sizes=1,16 --grid-dependency-prefetch --emit=ptx -o - 2>/dev/null | FileCheck %s --check-prefix=PREF
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --batch-sizes=1,16 --no-cubin -o - 2>/dev/null | FileCheck %s --check-prefix=ART
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --batch-sizes=1,16 --chip=sm_80 --grid-dependency-prefetch --grid-dependency-trigger=late --emit=ptx -o - 2>/dev/null | FileCheck %s --check-prefix=NONE
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --batch-sizes=1,16 --chip=sm_80 --no-cubin -o - 2>/dev/null | FileCheck %s --check-prefix=NONE
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --batch-sizes=1,16 --grid-dependency=false --grid-dependency-prefetch --emit=ptx -o - 2>/dev/null | FileCheck %s --check-prefix=NONE

// Each of the 9 kernels: the wait before any load or store.
// PTX-LABEL: .entry
// PTX-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// PTX-NOT: launch_dependents
// PTX: griddepcontrol.wait;
// PTX-LABEL: .entry
// PTX-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// PTX-NOT: launch_dependents
// PTX: griddepcontrol.wait;
// PTX-LABEL: .entry
// PTX-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// PTX-NOT: launch_dependents
// PTX: griddepcontrol.wait;
// PTX-LABEL: .entry
// PTX-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// PTX-NOT: launch_dependents
// PTX: griddepcontrol.wait;
// PTX-LABEL: .entry
// PTX-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// PTX-NOT: launch_dependents
// PTX: griddepcontrol.wait;
// PTX-LABEL: .entry
// PTX-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// PTX-NOT: launch_dependents
// PTX: griddepcontrol.wait;
// PTX-LABEL: .entry
// PTX-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// PTX-NOT: launch_dependents
// PTX: griddepcontrol.wait;
// PTX-LABEL: .entry
// PTX-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// PTX-NOT: launch_dependents
// PTX: griddepcontrol.wait;
// PTX-LABEL: .entry
// PTX-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// PTX-NOT: launch_dependents
// PTX: griddepcontrol.wait;
// PTX-NOT: .entry

// TRIG-LABEL: .entry
// TRIG-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// TRIG: griddepcontrol.launch_dependents;
// TRIG-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// TRIG: griddepcontrol.wait;
// TRIG-LABEL: .entry
// TRIG-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// TRIG: griddepcontrol.launch_dependents;
// TRIG-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// TRIG: griddepcontrol.wait;
// TRIG-LABEL: .entry
// TRIG-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// TRIG: griddepcontrol.launch_dependents;
// TRIG-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// TRIG: griddepcontrol.wait;
// TRIG-LABEL: .entry
// TRIG-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// TRIG: griddepcontrol.launch_dependents;
// TRIG-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// TRIG: griddepcontrol.wait;
// TRIG-LABEL: .entry
// TRIG-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// TRIG: griddepcontrol.launch_dependents;
// TRIG-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// TRIG: griddepcontrol.wait;
// TRIG-LABEL: .entry
// TRIG-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// TRIG: griddepcontrol.launch_dependents;
// TRIG-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// TRIG: griddepcontrol.wait;
// TRIG-LABEL: .entry
// TRIG-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// TRIG: griddepcontrol.launch_dependents;
// TRIG-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// TRIG: griddepcontrol.wait;
// TRIG-LABEL: .entry
// TRIG-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// TRIG: griddepcontrol.launch_dependents;
// TRIG-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// TRIG: griddepcontrol.wait;
// TRIG-LABEL: .entry
// TRIG-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// TRIG: griddepcontrol.launch_dependents;
// TRIG-NOT: {{(ld|st)\.(global|shared|local)|cp\.async|atom\.|red\.}}
// TRIG: griddepcontrol.wait;
// TRIG-NOT: .entry

// The matvec releases its dependents after its K loop, the tensor-core
// kernel and the norm before their first store.
// LATE-LABEL: .entry qf_matvec_0_m1
// LATE-NOT: {{(ld|st)\.global}}
// LATE: griddepcontrol.wait;
// LATE-NOT: st.global
// LATE: griddepcontrol.launch_dependents;
// LATE: st.global
// LATE-LABEL: .entry qf_mma_1_m16
// LATE-NOT: {{(ld|st)\.global}}
// LATE: griddepcontrol.wait;
// LATE-NOT: st.global
// LATE: griddepcontrol.launch_dependents;
// LATE: st.global
// LATE-LABEL: .entry qf_rms_norm
// LATE: griddepcontrol.wait;
// LATE-NOT: st.global
// LATE: griddepcontrol.launch_dependents;
// LATE: st.global

// Codes and scales of the matvec's rows: two prefetches, then the wait
// before any load; the tensor-core kernel's warps ask for the code tiles of
// their first stages and their rows' scales, then wait before any copy.
// PREF-LABEL: .entry qf_matvec_0_m1
// PREF-NOT: {{(ld|st)\.global|griddepcontrol}}
// PREF: cp.async.bulk.prefetch.L2.global
// PREF-NOT: {{(ld|st)\.global|griddepcontrol}}
// PREF: cp.async.bulk.prefetch.L2.global
// PREF-NOT: {{(ld|st)\.global}}
// PREF: griddepcontrol.wait;
// PREF-LABEL: .entry qf_mma_1_m16
// PREF-NOT: {{(ld|st)\.(global|shared)|cp\.async\.(ca|cg)|griddepcontrol}}
// PREF: cp.async.bulk.prefetch.L2.global
// PREF-NOT: {{(ld|st)\.(global|shared)|cp\.async\.(ca|cg)|griddepcontrol}}
// PREF: cp.async.bulk.prefetch.L2.global
// PREF-NOT: {{(ld|st)\.(global|shared)|cp\.async\.(ca|cg)}}
// PREF: griddepcontrol.wait;

// ART: "grid_dependency": true
// ART-NOT: "grid_dependency": false

// NONE-NOT: {{griddepcontrol|cp.async.bulk.prefetch}}
// NONE-NOT: grid_dependency
