// qf.sample's verifier (QFOps.cpp) and ODS constraints, one case each.

// RUN: qfuse-opt %s -split-input-file -verify-diagnostics

!logits = tensor<?x1000xf16>
func.func @params_width(%l: !logits, %p: tensor<1x7xi32>, %m: tensor<1x1000xi8>, %c: tensor<?xi32>) {
  // expected-error@+1 {{'qf.sample' op params must be [1, 8] or [?, 8], got 'tensor<1x7xi32>'}}
  %0 = qf.sample %l, %p, %m, %c : !logits, tensor<1x7xi32>, tensor<1x1000xi8>, tensor<?xi32> -> tensor<?xi32>
  return
}

// -----

func.func @params_rows(%l: tensor<4x1000xf16>, %p: tensor<2x8xi32>, %m: tensor<1x1000xi8>, %c: tensor<4xi32>) {
  // expected-error@+1 {{'qf.sample' op params must be [1, 8] or [4, 8], got 'tensor<2x8xi32>'}}
  %0 = qf.sample %l, %p, %m, %c : tensor<4x1000xf16>, tensor<2x8xi32>, tensor<1x1000xi8>, tensor<4xi32> -> tensor<4xi32>
  return
}

// -----

!logits = tensor<?x1000xf16>
func.func @mask_vocab(%l: !logits, %p: tensor<1x8xi32>, %m: tensor<1x999xi8>, %c: tensor<?xi32>) {
  // expected-error@+1 {{'qf.sample' op penalty_mask must be [1, 1000] or [?, 1000], got 'tensor<1x999xi8>'}}
  %0 = qf.sample %l, %p, %m, %c : !logits, tensor<1x8xi32>, tensor<1x999xi8>, tensor<?xi32> -> tensor<?xi32>
  return
}

// -----

func.func @counters_rows(%l: tensor<4x1000xf16>, %p: tensor<1x8xi32>, %m: tensor<1x1000xi8>, %c: tensor<3xi32>) {
  // expected-error@+1 {{'qf.sample' op counters must have 4 elements, got 'tensor<3xi32>'}}
  %0 = qf.sample %l, %p, %m, %c : tensor<4x1000xf16>, tensor<1x8xi32>, tensor<1x1000xi8>, tensor<3xi32> -> tensor<4xi32>
  return
}

// -----

func.func @result_rows(%l: tensor<4x1000xf16>, %p: tensor<1x8xi32>, %m: tensor<1x1000xi8>, %c: tensor<4xi32>) {
  // expected-error@+1 {{'qf.sample' op result must have 4 elements, got 'tensor<2xi32>'}}
  %0 = qf.sample %l, %p, %m, %c : tensor<4x1000xf16>, tensor<1x8xi32>, tensor<1x1000xi8>, tensor<4xi32> -> tensor<2xi32>
  return
}

// -----

func.func @dynamic_vocab(%l: tensor<4x?xf16>, %p: tensor<1x8xi32>, %m: tensor<1x1000xi8>, %c: tensor<4xi32>) {
  // expected-error@+1 {{'qf.sample' op needs a static vocabulary (the logits' last extent), got 'tensor<4x?xf16>'}}
  %0 = qf.sample %l, %p, %m, %c : tensor<4x?xf16>, tensor<1x8xi32>, tensor<1x1000xi8>, tensor<4xi32> -> tensor<4xi32>
  return
}

// -----

func.func @mask_type(%l: tensor<4x1000xf16>, %p: tensor<1x8xi32>, %m: tensor<1x1000xi32>, %c: tensor<4xi32>) {
  // expected-error@+1 {{'qf.sample' op operand #2 must be 2D tensor of 8-bit signless integer values, but got 'tensor<1x1000xi32>'}}
  %0 = qf.sample %l, %p, %m, %c : tensor<4x1000xf16>, tensor<1x8xi32>, tensor<1x1000xi32>, tensor<4xi32> -> tensor<4xi32>
  return
}

// -----

func.func @missing_operand(%l: tensor<4x1000xf16>, %p: tensor<1x8xi32>) {
  // expected-error@+1 {{expected ','}}
  %0 = qf.sample %l, %p : tensor<4x1000xf16>, tensor<1x8xi32> -> tensor<4xi32>
  return
}
