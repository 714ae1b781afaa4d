module @jit_golden attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> (tensor<2xf32> {jax.result_info = "result[0]"}, tensor<2xi32> {jax.result_info = "result[1]"}, tensor<2x3xi1> {jax.result_info = "result[2]"}, tensor<2x3xf32> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.multiply %arg0, %arg1 : tensor<2x3xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    %2 = stablehlo.add %0, %1 : tensor<2x3xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.reduce(%2 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    %4 = stablehlo.iota dim = 1 : tensor<2x3xi32>
    %cst_1 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %5:2 = stablehlo.reduce(%arg0 init: %cst_1), (%4 init: %c) across dimensions = [1] : (tensor<2x3xf32>, tensor<2x3xi32>, tensor<f32>, tensor<i32>) -> (tensor<2xf32>, tensor<2xi32>)
     reducer(%arg2: tensor<f32>, %arg4: tensor<f32>) (%arg3: tensor<i32>, %arg5: tensor<i32>)  {
      %8 = stablehlo.compare GT, %arg2, %arg4, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %9 = stablehlo.compare EQ, %arg2, %arg4, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %10 = stablehlo.compare NE, %arg2, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %11 = stablehlo.compare NE, %arg4, %arg4, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %12 = stablehlo.not %11 : tensor<i1>
      %13 = stablehlo.or %8, %10 : tensor<i1>
      %14 = stablehlo.and %13, %12 : tensor<i1>
      %15 = stablehlo.and %10, %11 : tensor<i1>
      %16 = stablehlo.or %9, %15 : tensor<i1>
      %17 = stablehlo.compare LT, %arg3, %arg5, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %18 = stablehlo.and %16, %17 : tensor<i1>
      %19 = stablehlo.or %14, %18 : tensor<i1>
      %20 = stablehlo.select %19, %arg2, %arg4 : tensor<i1>, tensor<f32>
      %21 = stablehlo.select %19, %arg3, %arg5 : tensor<i1>, tensor<i32>
      stablehlo.return %20, %21 : tensor<f32>, tensor<i32>
    }
    %6 = stablehlo.compare GT, %arg0, %arg1, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
    %cst_2 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %7 = "stablehlo.reduce_window"(%arg0, %cst_2) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [1, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 2>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %8 = stablehlo.maximum %arg2, %arg3 : tensor<f32>
      stablehlo.return %8 : tensor<f32>
    }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    return %3, %5#1, %6, %7 : tensor<2xf32>, tensor<2xi32>, tensor<2x3xi1>, tensor<2x3xf32>
  }
}
