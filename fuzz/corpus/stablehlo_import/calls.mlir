module @jit_g {
  func.func public @main(%arg0: tensor<4xi32>) -> (tensor<4xi32>, tensor<i32>) {
    %c = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
    %0:2 = call @helper(%arg0, %c) : (tensor<4xi32>, tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>)
    %1 = "stablehlo.transpose"(%0#0) <{permutation = array<i64: 0>}> : (tensor<4xi32>) -> tensor<4xi32>
    %c_0 = stablehlo.constant dense<-100> : tensor<i32>
    %2 = stablehlo.reduce(%0#1 init: %c_0) across dimensions = [0] : (tensor<4xi32>, tensor<i32>) -> tensor<i32>
     reducer(%a: tensor<i32>, %b: tensor<i32>)  {
      %3 = stablehlo.maximum %a, %b : tensor<i32>
      stablehlo.return %3 : tensor<i32>
    }
    return %1, %2 : tensor<4xi32>, tensor<i32>
  }
  func.func private @helper(%arg0: tensor<4xi32>, %arg1: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
    %0 = stablehlo.multiply %arg0, %arg1 : tensor<4xi32>
    %1 = "stablehlo.subtract"(%arg0, %arg1) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    return %0, %1 : tensor<4xi32>, tensor<4xi32>
  }
}
