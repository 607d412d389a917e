// Programmatic dependent launch: on sm_90 and later every generated kernel
// starts with griddepcontrol.wait (before any load or store), and the
// artifact marks it `grid_dependency`, which tells the runtime to launch it
// as a programmatic dependent of the kernel before it; with
// --grid-dependency-trigger, griddepcontrol.launch_dependents comes first
// (measured slower, docs/artifact.md). sm_80 has no griddepcontrol;
// --grid-dependency=false leaves it out.
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --batch-sizes=1,16 --emit=ptx -o - 2>/dev/null | FileCheck %s --check-prefix=PTX
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --batch-sizes=1,16 --grid-dependency-trigger --emit=ptx -o - 2>/dev/null | FileCheck %s --check-prefix=TRIG
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --batch-sizes=1,16 --no-cubin -o - 2>/dev/null | FileCheck %s --check-prefix=ART
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --batch-sizes=1,16 --chip=sm_80 --emit=ptx -o - 2>/dev/null | FileCheck %s --check-prefix=NONE
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --batch-sizes=1,16 --chip=sm_80 --no-cubin -o - 2>/dev/null | FileCheck %s --check-prefix=NONE
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --batch-sizes=1,16 --grid-dependency=false --no-cubin -o - 2>/dev/null | FileCheck %s --check-prefix=NONE

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

// ART: "grid_dependency": true
// ART-NOT: "grid_dependency": false

// NONE-NOT: griddepcontrol
// NONE-NOT: grid_dependency
