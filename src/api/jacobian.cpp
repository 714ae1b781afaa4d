// Helpers of jacfwd/jacrev (include/jitx/jacobian.h): the basis stacks and the checks.
#include "jitx/jacobian.h"

#include "core/errors.h"
#include "ops/convert.h"
#include "jitx/numpy.h"

namespace jitx::detail {

Array basis_stack(const Shape& shape, DType d, bool weak) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  Array rows = lax::broadcasted_iota(DType::int32, {n, n}, 0), cols = lax::broadcasted_iota(DType::int32, {n, n}, 1);
  Shape full{n};
  full.insert(full.end(), shape.begin(), shape.end());
  Array basis = lax::reshape(lax::convert_element_type(lax::eq(rows, cols), d), full);
  return weak ? convert_weak(basis, d, true) : basis;
}

Array integer_jacobian(const Array& out, const Array& x) {
  Shape s = out.shape();
  s.insert(s.end(), x.shape().begin(), x.shape().end());
  return zeros(s, out.dtype());
}

Array jacobian_reshape(const Array& jac, const Shape& out_shape, const Shape& in_shape) {
  Shape s = out_shape;
  s.insert(s.end(), in_shape.begin(), in_shape.end());
  return lax::reshape(jac, s);
}

void check_jacobian_types(const std::string& op, const Array& in, int argnum) {
  if (!is_floating(in.dtype()))
    grad_error(op, "requires real-valued (floating) inputs, but argument " + std::to_string(argnum) + " has type " +
               in.aval().str());
}

void check_jacobian_output(const std::string& op, const Array& out) {
  if (!is_floating(out.dtype()))
    grad_error(op, "requires a real-valued (floating) output, got " + out.aval().str());
}

}  // namespace jitx::detail
