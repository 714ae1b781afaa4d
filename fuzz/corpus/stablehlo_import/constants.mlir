module @jit_h {
  func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<3xf32>
    %cst_1 = stablehlo.constant dense<"0x0000803F0000004000004040"> : tensor<3xf32>
    %0 = stablehlo.compare  GT, %arg0, %cst_1,  FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    %1 = stablehlo.select %0, %arg0, %cst_1 : tensor<3xi1>, tensor<3xf32>
    %2 = stablehlo.iota dim = 0 : tensor<6xi32>
    %3 = stablehlo.slice %2 [1:6:2] : (tensor<6xi32>) -> tensor<3xi32>
    %4 = stablehlo.convert %3 : (tensor<3xi32>) -> tensor<3xf32>
    %5 = stablehlo.add %1, %4 : tensor<3xf32>
    %6 = "stablehlo.compare"(%5, %5) {comparison_direction = #stablehlo<comparison_direction NE>} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    %7 = "stablehlo.select"(%6, %cst, %5) : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %c = stablehlo.constant dense<[[true, false, true]]> : tensor<1x3xi1>
    %8 = stablehlo.reshape %c : (tensor<1x3xi1>) -> tensor<3xi1>
    %9 = stablehlo.select %8, %7, %cst_1 : tensor<3xi1>, tensor<3xf32>
    return %9 : tensor<3xf32>
  }
}
