// Error paths: bad input to every public op throws the right jitx exception, naming the op, the value and the caller.
#include <optional>

#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;

namespace {
/// Runs f, which must throw E; the message must start with "[op]", contain every part, and end with
/// "(at errors_test.cpp:<line>)" when with_loc is set.
template <class E>
void expect_error(const std::function<void()>& f, const std::string& op, const std::vector<std::string>& parts,
                  bool with_loc = true) {
  try {
    f();
  } catch (const E& e) {
    std::string m = e.what();
    INFO("message: " << m);
    CHECK(m.rfind("[" + op + "]", 0) == 0);
    for (auto& p : parts) CHECK_THAT(m, Contains(p));
    if (with_loc) {
      CHECK_THAT(m, Contains("(at errors_test.cpp:"));
      CHECK_THAT(m, EndsWith(")"));
    }
    return;
  } catch (const std::exception& e) {
    FAIL("expected a different exception type for [" << op << "], got: " << e.what());
  }
  FAIL("expected an exception from [" << op << "], none was thrown");
}

Array f32(Shape s) { return zeros(std::move(s), float32); }
Array i32(Shape s) { return zeros(std::move(s), int32); }
}  // namespace

TEST_CASE("lax elementwise ops reject mismatched shapes and dtypes", "[errors]") {
  expect_error<ShapeError>([] { lax::add(f32({2, 3}), f32({3, 2})); }, "add", {"(2, 3)", "(3, 2)"});
  expect_error<TypeError>([] { lax::mul(f32({2}), i32({2})); }, "mul", {"f32", "i32"});
  expect_error<TypeError>([] { lax::exp(i32({2})); }, "exp", {"i32", "floating"});
  expect_error<TypeError>([] { lax::sub(zeros({2}, bool_), zeros({2}, bool_)); }, "sub", {"bool"});
  expect_error<TypeError>([] { lax::shift_left(f32({2}), f32({2})); }, "shift_left", {"f32", "integer"});
  expect_error<TypeError>([] { lax::population_count(f32({1})); }, "population_count", {"f32"});
  expect_error<TypeError>([] { lax::bitwise_and(f32({1}), f32({1})); }, "and", {"f32"});
  expect_error<TypeError>([] { lax::atan2(i32({1}), i32({1})); }, "atan2", {"i32"});
  expect_error<TypeError>([] { lax::neg(zeros({1}, bool_)); }, "neg", {"bool"});
  expect_error<TypeError>([] { lax::select_n(f32({2}), f32({2}), f32({2})); }, "select_n", {"predicate", "f32"});
  expect_error<TypeError>([] { lax::select_n(zeros({2}, bool_), f32({2}), i32({2})); }, "select_n",
                          {"f32[2]", "i32[2]"});
  expect_error<ShapeError>([] { lax::select_n(zeros({3}, bool_), f32({2}), f32({2})); }, "select_n", {"(3,)", "(2,)"});
  expect_error<TypeError>([] { lax::clamp(i32({}), f32({2}), f32({})); }, "clamp", {"i32", "f32"});
  expect_error<ShapeError>([] { lax::clamp(f32({3}), f32({2}), f32({})); }, "clamp", {"(3,)", "(2,)"});
  expect_error<ShapeError>([] { lax::bitcast_convert_type(f32({3}), float64); }, "bitcast_convert_type",
                           {"f32[3]", "f64", "size 2", "(3,)"});
  expect_error<TypeError>([] { lax::bitcast_convert_type(zeros({2}, bool_), uint8); }, "bitcast_convert_type",
                          {"bool"});
}

TEST_CASE("lax reductions and windows reject bad axes", "[errors]") {
  expect_error<ShapeError>([] { lax::reduce_sum(f32({2, 3}), {2}); }, "reduce_sum", {"axis 2", "rank 2"});
  expect_error<ShapeError>([] { lax::reduce_max(f32({2, 3}), {-1}); }, "reduce_max", {"axis -1"});
  expect_error<ShapeError>([] { lax::reduce_min(f32({2, 3}), {1, 1}); }, "reduce_min", {"axis 1", "twice"});
  expect_error<TypeError>([] { lax::reduce_and(f32({2}), {0}); }, "reduce_and", {"f32"});
  expect_error<ShapeError>([] { lax::argmax(f32({2, 0}), 1); }, "argmax", {"empty", "(2, 0)"});
  expect_error<ShapeError>([] { lax::argmin(f32({2}), 1); }, "argmin", {"axis 1"});
  expect_error<TypeError>([] { lax::argmax(f32({2}), 0, float32); }, "argmax", {"index_dtype", "f32"});
  expect_error<ShapeError>([] { lax::cumsum(f32({2, 3}), 2); }, "cumsum", {"axis 2", "rank 2"});
  expect_error<ShapeError>([] { lax::cumprod(f32({}), 0); }, "cumprod", {"rank 0"});
  expect_error<ShapeError>([] { lax::reduce_window_sum(f32({4, 4}), {{2}, {1}, {{0, 0}}, {}, {}}); },
                           "reduce_window_sum", {"f32[4,4]"});
  expect_error<ShapeError>([] { lax::reduce_window_max(f32({4}), {{0}, {1}, {{0, 0}}, {}, {}}); }, "reduce_window_max",
                           {"positive"});
}

TEST_CASE("lax dot_general and shape ops reject bad dimensions", "[errors]") {
  expect_error<ShapeError>([] { lax::dot_general(f32({2, 3}), f32({4, 5}), {{1}, {0}, {}, {}}); }, "dot_general",
                           {"(2, 3)", "(4, 5)", "3", "4"});
  expect_error<TypeError>([] { lax::dot_general(f32({2, 3}), i32({3, 5}), {{1}, {0}, {}, {}}); }, "dot_general",
                          {"f32", "i32"});
  expect_error<ShapeError>([] { lax::dot_general(f32({2, 3}), f32({3, 5}), {{1}, {}, {}, {}}); }, "dot_general",
                           {"pair up"});
  expect_error<ShapeError>([] { lax::dot_general(f32({2, 3}), f32({4, 3}), {{1}, {1}, {0}, {0}}); }, "dot_general",
                           {"batch"});
  expect_error<ShapeError>([] { lax::dot_general(f32({2, 3}), f32({3}), {{2}, {0}, {}, {}}); }, "dot_general",
                           {"axis 2"});
  expect_error<ShapeError>([] { lax::dot(f32({2, 3, 4}), f32({4})); }, "dot", {"f32[2,3,4]"});
  expect_error<ShapeError>([] { lax::broadcast_in_dim(f32({3}), {2, 4}, {1}); }, "broadcast_in_dim",
                           {"(3,)", "(2, 4)"});
  expect_error<ShapeError>([] { lax::broadcast_in_dim(f32({1, 3}), {3, 3}, {1, 1}); }, "broadcast_in_dim",
                           {"distinct"});
  expect_error<ShapeError>([] { lax::broadcast_in_dim(f32({3}), {3}, {}); }, "broadcast_in_dim", {"one entry"});
  expect_error<ShapeError>([] { lax::reshape(f32({2, 3}), {4, 2}); }, "reshape", {"(2, 3)", "(4, 2)", "6", "8"});
  expect_error<ShapeError>([] { lax::reshape(f32({2, 3}), {-6, -1}); }, "reshape", {"negative"});
  expect_error<ShapeError>([] { lax::transpose(f32({2, 3}), {0, 0}); }, "transpose", {"(0, 0)", "permutation"});
  expect_error<ShapeError>([] { lax::transpose(f32({2, 3}), {1, 0, 2}); }, "transpose", {"(1, 0, 2)"});
  expect_error<ShapeError>([] { lax::rev(f32({2, 3}), {2}); }, "rev", {"2", "rank 2"});
  expect_error<ShapeError>([] { lax::slice(f32({4, 4}), {0, 2}, {4, 5}); }, "slice", {"axis 1", "size 4"});
  expect_error<ShapeError>([] { lax::slice(f32({4}), {3}, {1}); }, "slice", {"[3:1:1]"});
  expect_error<ShapeError>([] { lax::slice(f32({4}), {0}, {4}, {0}); }, "slice", {"[0:4:0]"});
  expect_error<ShapeError>([] { lax::slice(f32({4, 4}), {0}, {4}); }, "slice", {"2 entries"});
  Array zero = Array::scalar_int(0, int32);
  expect_error<ShapeError>([&] { lax::dynamic_slice(f32({4}), {zero}, {5}); }, "dynamic_slice", {"5", "4"});
  expect_error<ShapeError>([&] { lax::dynamic_slice(f32({4, 4}), {zero}, {2, 2}); }, "dynamic_slice", {"f32[4,4]"});
  expect_error<TypeError>([&] { lax::dynamic_slice(f32({4}), {Array::scalar(0, float32)}, {2}); }, "dynamic_slice",
                          {"f32[]"});
  expect_error<ShapeError>([&] { lax::dynamic_update_slice(f32({2}), f32({3}), {zero}); }, "dynamic_update_slice",
                           {"(3,)", "(2,)"});
  expect_error<TypeError>([&] { lax::dynamic_update_slice(f32({2}), i32({1}), {zero}); }, "dynamic_update_slice",
                          {"i32", "f32"});
  expect_error<ShapeError>([] { lax::concatenate({f32({2, 3}), f32({2, 4})}, 0); }, "concatenate",
                           {"(2, 3)", "(2, 4)"});
  expect_error<TypeError>([] { lax::concatenate({f32({2}), i32({2})}, 0); }, "concatenate", {"f32", "i32"});
  expect_error<ShapeError>([] { lax::concatenate({}, 0); }, "concatenate", {"at least one"});
  expect_error<ShapeError>([] { lax::concatenate({f32({2})}, 1); }, "concatenate", {"dimension 1"});
  expect_error<ShapeError>([] { lax::pad(f32({3}), Array::scalar(0, float32), {{0, 0, -1}}); }, "pad",
                           {"interior", "-1"});
  expect_error<ShapeError>([] { lax::pad(f32({3}), Array::scalar(0, float32), {{-2, -2, 0}}); }, "pad", {"negative"});
  expect_error<TypeError>([] { lax::pad(f32({3}), Array::scalar(0, float64), {{1, 1, 0}}); }, "pad", {"f32", "f64[]"});
  expect_error<ShapeError>([] { lax::pad(f32({3}), Array::scalar(0, float32), {}); }, "pad", {"padding_config"});
  expect_error<ShapeError>([] { lax::broadcasted_iota(int32, {2, 3}, 2); }, "iota", {"dimension 2", "(2, 3)"});
  expect_error<TypeError>([] { lax::iota(bool_, 3); }, "iota", {"bool"});
  expect_error<ShapeError>([] { lax::full({2}, f32({2})); }, "full", {"(2,)"});
}

TEST_CASE("jnp functions reject bad shapes, axes and dtypes", "[errors]") {
  expect_error<ShapeError>([] { jnp::add(f32({2, 3}), f32({4})); }, "add", {"(2, 3)", "(4,)"});
  expect_error<ShapeError>([] { (void)(f32({2, 3}) * f32({3, 2})); }, "multiply", {"(2, 3)", "(3, 2)"});
  expect_error<ShapeError>([] { jnp::where(zeros({3}, bool_), f32({2}), f32({2})); }, "where", {"(3,)", "(2,)"});
  expect_error<ShapeError>([] { jnp::sum(f32({2, 3}), {2}); }, "sum", {"axis 2", "rank 2"});
  expect_error<ShapeError>([] { jnp::mean(f32({2, 3}), {0, -2}); }, "mean", {"repeated"});
  expect_error<ShapeError>([] { jnp::argmax(f32({2, 3}), 5); }, "argmax", {"axis 5"});
  expect_error<ShapeError>([] { jnp::reshape(f32({2, 3}), {-1, -1}); }, "reshape", {"(-1, -1)"});
  expect_error<ShapeError>([] { jnp::reshape(f32({2, 3}), {4, -1}); }, "reshape", {"(2, 3)", "(4, -1)"});
  expect_error<ShapeError>([] { f32({2, 3}).reshape({5}); }, "reshape", {"(2, 3)", "(5,)"});
  expect_error<ShapeError>([] { jnp::matmul(f32({}), f32({2})); }, "matmul", {"()", "(2,)"});
  expect_error<ShapeError>([] { jnp::matmul(f32({2, 3}), f32({4, 2})); }, "matmul", {"(2, 3)", "(4, 2)"});
  expect_error<ShapeError>([] { jnp::matmul(f32({2, 2, 3}), f32({3, 3, 2})); }, "matmul", {"(2,)", "(3,)"});
  expect_error<ShapeError>([] { jnp::einsum("ij,jk", {f32({2, 3}), f32({3, 2})}); }, "einsum", {"ij,jk"});
  expect_error<ShapeError>([] { jnp::einsum("ij,jk->ik", {f32({2, 3})}); }, "einsum", {"2 operands", "got 1"});
  expect_error<ShapeError>([] { jnp::einsum("ij->i", {f32({2})}); }, "einsum", {"rank 1", "'ij'"});
  expect_error<ShapeError>([] { jnp::einsum("ij,jk->ik", {f32({2, 3}), f32({4, 2})}); }, "einsum", {"'j'", "3", "4"});
  expect_error<ShapeError>([] { jnp::einsum("ij->ik", {f32({2, 3})}); }, "einsum", {"'k'"});
  expect_error<ShapeError>([] { jnp::squeeze(f32({1, 3}), {1}); }, "squeeze", {"axis 1", "size 3"});
  expect_error<ShapeError>([] { jnp::expand_dims(f32({3}), {0, 0}); }, "expand_dims", {"repeated"});
  expect_error<ShapeError>([] { jnp::expand_dims(f32({3}), {3}); }, "expand_dims", {"axis 3"});
  expect_error<ShapeError>([] { jnp::transpose(f32({2, 3}), {0, 2}); }, "transpose", {"axis 2"});
  expect_error<ShapeError>([] { jnp::concatenate({f32({}), f32({})}); }, "concatenate", {"zero-dimensional"});
  expect_error<ShapeError>([] { jnp::concatenate({}); }, "concatenate", {"at least one"});
  expect_error<ShapeError>([] { jnp::stack({f32({2}), f32({3})}); }, "stack", {"(2,)", "(3,)"});
  expect_error<ShapeError>([] { jnp::broadcast_to(f32({3}), {2, 4}); }, "broadcast_to", {"(3,)", "(2, 4)"});
  expect_error<ShapeError>([] { jnp::broadcast_to(f32({2, 3}), {3}); }, "broadcast_to", {"(2, 3)", "(3,)"});
  expect_error<ShapeError>([] { jnp::slice_axis(f32({4}), 0, 0, 4, 0); }, "slice", {"step", "0"});
  expect_error<TypeError>([] { jnp::negative(zeros({2}, bool_)); }, "negative", {"bool"});
  expect_error<TypeError>([] { jnp::bitwise_not(f32({2})); }, "bitwise_not", {"f32"});
  expect_error<TypeError>([] { jnp::sign(zeros({2}, bool_)); }, "sign", {"bool"});  // power(bool) is int32 now
  expect_error<TypeError>([] { jnp::left_shift(f32({2}), f32({2})); }, "shift_left", {"f32"});
  expect_error<TypeError>([] { nn::one_hot(jnp::astype(f32({2}), DType::bool_), 3); }, "one_hot", {"bool"});
  expect_error<ShapeError>([] { nn::softmax(f32({2, 3}), 2); }, "max", {"axis 2"});
}

TEST_CASE("creation functions and host reads reject bad arguments", "[errors]") {
  expect_error<ShapeError>([] { zeros({2, -1}); }, "full", {"(2, -1)"});
  expect_error<ShapeError>([] { array<float>({1, 2}, Shape{-2}); }, "array", {"(-2,)"});
  expect_error<ShapeError>([] { arange(0, 3, 0); }, "arange", {"step"});
  expect_error<ShapeError>([] { linspace(0, 1, -3); }, "linspace", {"-3"});
  expect_error<ShapeError>([] { eye(-2); }, "eye", {"-2"});
  expect_error<ShapeError>([] { f32({3}).item<float>(); }, "item", {"(3,)"});
  expect_error<ShapeError>([] { f32({0}).item<float>(); }, "item", {"(0,)"});
  expect_error<ShapeError>([] { f32({}).dim(0); }, "dim", {"rank 0"});
  expect_error<ShapeError>([] { f32({2})[2]; }, "getitem", {"index 2", "size 2"}, false);
  expect_error<ShapeError>([] { f32({})[0]; }, "getitem", {"0-d"}, false);  // operator[] cannot take a source location
  expect_error<TypeError>([] { dtype_from_name("f8"); }, "dtype", {"'f8'"}, false);
}

TEST_CASE("default-constructed Arrays are rejected, not dereferenced", "[errors]") {
  Array empty;
  CHECK_FALSE(empty.valid());
  CHECK(empty.to_string() == "Array(<empty>)");
  expect_error<TypeError>([&] { lax::add(empty, f32({})); }, "add", {"empty"});
  expect_error<TypeError>([&] { lax::exp(empty); }, "exp", {"empty"});
  expect_error<TypeError>([&] { jnp::add(f32({}), empty); }, "add", {"empty"});
  expect_error<TypeError>([&] { jnp::sum(empty); }, "reduce_sum", {"empty"});
  expect_error<TypeError>([&] { empty.to_vector<float>(); }, "to_vector", {"empty"});
  expect_error<TypeError>([&] { empty.item<float>(); }, "item", {"empty"});
  auto j = jit([](Array x) { return Array(); });
  expect_error<TypeError>([&] { j(f32({2})); }, "fn", {"empty"}, false);
}

TEST_CASE("tracers: bool conversion, host reads and escaped tracers", "[errors]") {
  // `if (x > 0)` on a tracer: TracerError that points at lax::cond and at the caller.
  auto branchy = jit([](Array x) {
    if (jnp::sum(x) > 0) return x;
    return -x;
  });
  expect_error<TracerError>([&] { branchy(f32({2})); }, "bool", {"lax::cond", "bool[]"}, false);
  // A concrete array of several elements: ambiguous, as NumPy's ValueError (no jitx file named as the place).
  try {
    (void)static_cast<bool>(f32({2}) > 0.0f);
    FAIL("bool of a 2-element array should throw");
  } catch (const ShapeError& e) {
    std::string m = e.what();
    CHECK_THAT(m, Contains("[bool]") && Contains("ambiguous") && Contains("jnp::any") && Contains("bool[2]"));
    CHECK_THAT(m, !Contains("array.cpp"));
  }
  CHECK(static_cast<bool>(jnp::sum(f32({2})) == jnp::sum(f32({2}))));
  try {
    branchy(f32({2}));
  } catch (const TracerError& e) {
    CHECK_THAT(std::string(e.what()), Contains("errors_test.cpp"));
  }
  // item() / to_vector() on a tracer.
  auto reads = jit([](Array x) { return Array(x.item<float>()); });
  expect_error<TracerError>([&] { reads(f32({})); }, "item", {"tracer", "f32[]"});
  auto reads2 = jit([](Array x) {
    (void)x.to_vector<float>();
    return x;
  });
  expect_error<TracerError>([&] { reads2(f32({3})); }, "to_vector", {"tracer", "f32[3]"});
  // A tracer stored outside its trace cannot be used after the trace ends (eagerly or in another trace).
  Array leaked;
  auto leak = jit([&leaked](Array x) {
    leaked = x * 2;
    return x;
  });
  leak(f32({2}));
  REQUIRE(leaked.is_tracer());
  CHECK(leaked.to_string() == "Traced<f32[2]>");
  expect_error<TracerError>([&] { lax::add(leaked, f32({2})); }, "add", {"escaped", "f32[2]"});
  expect_error<TracerError>([&] { (void)(leaked + 1.0); }, "add", {"escaped"});
  expect_error<TracerError>([&] { leaked.to_vector<float>(); }, "to_vector", {"tracer"});
  auto uses = jit([&leaked](Array x) { return x + leaked; });
  expect_error<TracerError>([&] { uses(f32({2})); }, "add", {"escaped"});
  // An op error inside a traced function names the op and the line in the user's file, not jit's.
  auto bad = jit([](Array x) { return lax::add(x, f32({3})); });
  expect_error<ShapeError>([&] { bad(f32({2})); }, "add", {"(2,)", "(3,)"});
  auto bad2 = jit([](Array x) { return jnp::sum(x, {4}); });
  expect_error<ShapeError>([&] { bad2(f32({2})); }, "sum", {"axis 4"});
  // After an error the jit cache is not poisoned: a good call still works.
  auto ok = jit([](Array x) { return x + 1.0; });
  CHECK(ok(make({1, 2}, float32)).to_vector<float>() == std::vector<float>{2, 3});
}

TEST_CASE("zero-size arrays work where they should", "[errors]") {
  Array e = f32({0, 3});
  CHECK(jnp::sum(e, {0}).to_vector<float>() == std::vector<float>{0, 0, 0});
  CHECK(jnp::prod(e, {0}).to_vector<float>() == std::vector<float>{1, 1, 1});
  CHECK(jnp::sum(e, {1}).shape() == Shape{0});
  CHECK(jnp::all(zeros({0}, bool_)).item<bool>() == true);
  CHECK(jnp::any(zeros({0}, bool_)).item<bool>() == false);
  CHECK(jnp::sum(i32({0})).item<int>() == 0);
  CHECK(jnp::exp(e).shape() == Shape{0, 3});
  CHECK((e + f32({3})).shape() == Shape{0, 3});
  CHECK(jnp::matmul(f32({2, 0}), f32({0, 3})).to_vector<float>() == std::vector<float>(6, 0));
  CHECK(jnp::matmul(e, f32({3, 2})).shape() == Shape{0, 2});
  CHECK(jnp::concatenate({e, f32({2, 3})}).shape() == Shape{2, 3});
  CHECK(jnp::reshape(e, {3, -1}).shape() == Shape{3, 0});
  CHECK(jnp::transpose(e).shape() == Shape{3, 0});
  CHECK(jnp::cumsum(e, 0).shape() == Shape{0, 3});
  CHECK(lax::pad(f32({0}), Array::scalar(7, float32), {{1, 1, 3}}).to_vector<float>() == std::vector<float>{7, 7});
  CHECK(e.to_vector<float>().empty());
  auto j = jit([](Array x) { return jnp::sum(x * 2.0, {0}); });
  CHECK(j(e).to_vector<float>() == std::vector<float>{0, 0, 0});
  // Reductions with no identity are errors on empty axes, as in NumPy and JAX.
  expect_error<ShapeError>([&] { jnp::max(e, {0}); }, "max", {"empty", "(0, 3)"});
  expect_error<ShapeError>([&] { jnp::min(e); }, "min", {"empty"});
  expect_error<ShapeError>([&] { jnp::argmax(e); }, "argmax", {"empty"});
}

// --- sizes, dtypes and options that used to crash, hang or throw a non-jitx exception -------------------------------
TEST_CASE("host data must fill the shape it is given", "[errors]") {
  expect_error<ShapeError>([] { array(std::vector<float>{1, 2, 3}, {2, 4}); }, "array", {"3 values", "(2, 4)", "8"});
  expect_error<ShapeError>([] { array(std::vector<int>(9, 1), {2, 4}); }, "array", {"9 values", "holds 8"});
  auto ok = array(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(ok.to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("shapes whose element count or byte size overflows int64 are ShapeErrors", "[errors]") {
  expect_error<ShapeError>([] { zeros({int64_t(1) << 62, 4}); }, "full", {"more elements than int64"});
  expect_error<ShapeError>([] { zeros({int64_t(1) << 61}, float64); }, "full", {"too large to address"});
  expect_error<ShapeError>([] { jnp::reshape(zeros({4}), {(int64_t(1) << 62) + 3, 4}); }, "reshape", {});
  expect_error<ShapeError>([] { jnp::broadcast_to(zeros({1}), {int64_t(1) << 32, int64_t(1) << 32}); },
                           "broadcast_in_dim", {"more elements than int64"});
  expect_error<ShapeError>([] { lax::iota(int32, int64_t(1) << 62); }, "iota", {"too large to address"});
  // Inside a trace the same rule holds (the result type is checked whatever the transformation).
  expect_error<ShapeError>([] { jit([](Array x) { return jnp::broadcast_to(x, {int64_t(1) << 40, 1 << 30}); })(
                                    zeros({1})); }, "broadcast_in_dim", {}, false);
  expect_error<ShapeError>([] { zeros({3, -2}); }, "full", {"negative dimension"});
  // A zero dimension does not excuse the others: strides are products of them (JAX accepts these shapes).
  expect_error<ShapeError>([] { zeros({0, int64_t(1) << 62, 4}); }, "full", {"non-zero dimensions"});
  expect_error<ShapeError>([] { zeros({int64_t(1) << 62, 4, 0}); }, "full", {"non-zero dimensions"});
  CHECK(zeros({0, int64_t(1) << 40}).shape() == Shape{0, int64_t(1) << 40});
  // The samplers draw per element, so their shapes are checked before any count is multiplied out.
  expect_error<ShapeError>([] { random::uniform(random::PRNGKey(0), {int64_t(1) << 62, 4}); }, "uniform",
                           {"more elements than int64"});
}

TEST_CASE("invalid dtype values are TypeErrors, not hangs", "[errors]") {
  expect_error<TypeError>([] { zeros({3}, DType(200)); }, "full", {"DType(200)"});
  expect_error<TypeError>([] { zeros({3}).astype(DType(200)); }, "convert_element_type", {"DType(200)"});
  expect_error<TypeError>([] { array(std::vector<float>{1, 2}, {2}, DType(99)); }, "array", {"DType(99)"});
  CHECK_FALSE(is_valid_dtype(DType(13)));
  CHECK(is_valid_dtype(DType::float64));
}

TEST_CASE("an allocation that fails is a RuntimeError naming the size, not std::bad_alloc", "[errors]") {
  // 2^40 int32 values (4 TiB) are a valid shape that no host can hold.
  try {
    arange(int64_t(1) << 40).block_until_ready();
    FAIL("expected a RuntimeError");
  } catch (const RuntimeError& e) {
    std::string m = e.what();
    INFO(m);
    CHECK_THAT(m, Contains("[allocate] out of host memory allocating"));
    CHECK_THAT(m, Contains("live arrays"));
  }
}

TEST_CASE("one_hot, logsumexp and softmax at the edges of their domains", "[errors]") {
  expect_error<ShapeError>([] { nn::one_hot(array({1, 2}), -1); }, "one_hot", {"non-negative", "-1"});
  CHECK(nn::one_hot(array({1, 2}), 0).shape() == Shape{2, 0});
  // Over an empty axis JAX gives -inf (logsumexp) and an empty result (softmax), as max with initial=-inf does.
  Array lse = nn::logsumexp(zeros({3, 0}), {-1});
  REQUIRE(lse.shape() == Shape{3});
  for (float v : lse.to_vector<float>()) CHECK(v == -std::numeric_limits<float>::infinity());
  CHECK(nn::softmax(zeros({3, 0}), -1).shape() == Shape{3, 0});
  CHECK(nn::log_softmax(zeros({2, 0}), -1).shape() == Shape{2, 0});
  // jitted too
  Array jl = jit([](Array x) { return nn::logsumexp(x, {0}); })(zeros({0, 2}));
  for (float v : jl.to_vector<float>()) CHECK(v == -std::numeric_limits<float>::infinity());
  // Ordinary rows are unchanged: logsumexp([0, log 3]) = log 4.
  CHECK(nn::logsumexp(array({0.f, std::log(3.f)}), {0}).item<float>() == Approx(std::log(4.f)));
}

TEST_CASE("jit rejects static and donated positions that are out of range or overlap", "[errors]") {
  auto twice = [](Array x) { return x * 2; };
  // (Calls through operator() name jit.h as their site until the call-site capture of the usability issue lands.)
  expect_error<TypeError>([&] { jit(twice, {.static_argnums = {3}})(zeros({2})); }, "fn",
                          {"static_argnums containing 3", "called with 1 argument"}, false);
  expect_error<TypeError>([&] { jit(twice, {.donate_argnums = {1}})(zeros({2})); }, "fn",
                          {"donate_argnums containing 1", "positions below 1"}, false);
  expect_error<TypeError>(
      [] { jit([](Array x, int k) { return x * k; }, {.static_argnums = {1}, .donate_argnums = {1}}); }, "jit",
      {"both static_argnums and donate_argnums"}, false);
  expect_error<TypeError>([&] { jit(twice, {.static_argnums = {-1}}); }, "jit", {"no negative"}, false);
  expect_error<TypeError>([&] { jit(twice, {.donate_argnums = {0, 0}}); }, "jit", {"twice"}, false);
  // In range, they work as before.
  auto j = jit([](Array x, int k) { return x * k; }, {.static_argnums = {1}});
  CHECK(j(array({1.f, 2.f}), 3).to_vector<float>() == std::vector<float>{3, 6});
}
