module @jit_fn attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8xf32>) -> (tensor<4x8xf32> {jax.result_info = "result[0]"}, tensor<4x8xf32> {jax.result_info = "result[1]"}, tensor<8xi32> {jax.result_info = "result[2]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<i32>
    %1:2 = stablehlo.while(%iterArg = %0, %iterArg_2 = %arg0) : tensor<i32>, tensor<4x8xf32>
    cond {
      %c_3 = stablehlo.constant dense<3> : tensor<i32>
      %6 = stablehlo.compare LT, %iterArg, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %6 : tensor<i1>
    } do {
      %6 = stablehlo.sine %iterArg_2 : tensor<4x8xf32>
      %cst_3 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %7 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
      %8 = stablehlo.multiply %6, %7 : tensor<4x8xf32>
      %c_4 = stablehlo.constant dense<1> : tensor<i32>
      %9 = stablehlo.add %iterArg, %c_4 : tensor<i32>
      stablehlo.return %9, %8 : tensor<i32>, tensor<4x8xf32>
    }
    %2 = stablehlo.iota dim = 0 : tensor<4x8xi32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %3:2 = stablehlo.reduce(%arg0 init: %cst), (%2 init: %c_0) across dimensions = [0] : (tensor<4x8xf32>, tensor<4x8xi32>, tensor<f32>, tensor<i32>) -> (tensor<8xf32>, tensor<8xi32>)
     reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)  {
      %6 = stablehlo.compare GT, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %7 = stablehlo.compare EQ, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %8 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %9 = stablehlo.compare NE, %arg3, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %10 = stablehlo.not %9 : tensor<i1>
      %11 = stablehlo.or %6, %8 : tensor<i1>
      %12 = stablehlo.and %11, %10 : tensor<i1>
      %13 = stablehlo.and %8, %9 : tensor<i1>
      %14 = stablehlo.or %7, %13 : tensor<i1>
      %15 = stablehlo.compare LT, %arg2, %arg4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %16 = stablehlo.and %14, %15 : tensor<i1>
      %17 = stablehlo.or %12, %16 : tensor<i1>
      %18 = stablehlo.select %17, %arg1, %arg3 : tensor<i1>, tensor<f32>
      %19 = stablehlo.select %17, %arg2, %arg4 : tensor<i1>, tensor<i32>
      stablehlo.return %18, %19 : tensor<f32>, tensor<i32>
    }
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = "stablehlo.reduce_window"(%1#1, %cst_1) <{base_dilations = array<i64: 1, 1>, padding = dense<[[3, 0], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 4, 1>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %6 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %6 : tensor<f32>
    }) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %5 = "stablehlo.sort"(%1#1) <{dimension = 1 : i64, is_stable = true}> ({
      ^bb0(%lhs0: tensor<f32>, %rhs0: tensor<f32>):
        %zero0 = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
        %nan0 = "stablehlo.constant"() {value = dense<0x7FC00000> : tensor<f32>} : () -> tensor<f32>
        %lhs0_z = "stablehlo.compare"(%lhs0, %zero0) {comparison_direction = #stablehlo<comparison_direction EQ>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<f32>, tensor<f32>) -> tensor<i1>
        %lhs0_nz = "stablehlo.select"(%lhs0_z, %zero0, %lhs0) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
        %lhs0_n = "stablehlo.compare"(%lhs0, %lhs0) {comparison_direction = #stablehlo<comparison_direction NE>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<f32>, tensor<f32>) -> tensor<i1>
        %lhs0_key = "stablehlo.select"(%lhs0_n, %nan0, %lhs0_nz) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
        %rhs0_z = "stablehlo.compare"(%rhs0, %zero0) {comparison_direction = #stablehlo<comparison_direction EQ>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<f32>, tensor<f32>) -> tensor<i1>
        %rhs0_nz = "stablehlo.select"(%rhs0_z, %zero0, %rhs0) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
        %rhs0_n = "stablehlo.compare"(%rhs0, %rhs0) {comparison_direction = #stablehlo<comparison_direction NE>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<f32>, tensor<f32>) -> tensor<i1>
        %rhs0_key = "stablehlo.select"(%rhs0_n, %nan0, %rhs0_nz) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
        %lt0 = "stablehlo.compare"(%lhs0_key, %rhs0_key) {comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type TOTALORDER>} : (tensor<f32>, tensor<f32>) -> tensor<i1>
        "stablehlo.return"(%lt0) : (tensor<i1>) -> ()
    }) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    return %5, %4, %3#1 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xi32>
  }
}
