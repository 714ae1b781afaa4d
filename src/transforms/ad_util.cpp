// Helpers the JVP and transpose rules are written with: symbolic zeros, tangent sums, scalar broadcasting.
#include "core/errors.h"
#include "jitx/lax.h"
#include "transforms/ad.h"

namespace jitx::detail {

Array scalar_like(const Array& x, double v) { return Array::scalar(v, x.dtype()); }

Array zeros_like_aval(const ShapedArray& aval) {
  Array z = is_floating(aval.dtype) ? Array::scalar(0.0, aval.dtype) : Array::scalar_int(0, aval.dtype);
  return aval.shape.empty() ? z : lax::broadcast_in_dim(z, aval.shape, {});
}

Array instantiate(const Array& t, const ShapedArray& aval) { return t.valid() ? t : zeros_like_aval(aval); }

Array broadcast_to(const Array& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  JITX_ASSERT(x.ndim() == 0, "broadcast_to: {} to {}", x.aval().str(), shape_str(shape));
  return lax::broadcast_in_dim(x, shape, {});
}

Array add_tangents(const Array& a, const Array& b) {
  if (!a.valid()) return b;
  if (!b.valid()) return a;
  return lax::add(a, b);
}

Array unbroadcast(const Array& ct, const ShapedArray& aval) {
  if (!ct.valid() || ct.shape() == aval.shape) return ct;
  JITX_ASSERT(aval.shape.empty(), "unbroadcast: {} to {}", ct.aval().str(), aval.str());
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < ct.ndim(); ++i) axes.push_back(i);
  return lax::reduce_sum(ct, axes);
}

static const Primitive& lookup(const std::string& name) {
  const Primitive* p = find_primitive(name);
  JITX_ASSERT(p, "primitive {} is not registered", name);
  return *p;
}

JvpFn defjvp(std::string prim, std::vector<TangentFn> per_input) {
  return [prim, per_input](std::span<const Array> primals, std::span<const Array> tangents, const Params& ps) {
    std::vector<Array> outs = bind(lookup(prim), {primals.begin(), primals.end()}, ps);
    Array t_out;
    for (size_t i = 0; i < tangents.size(); ++i)
      if (tangents[i].valid() && i < per_input.size() && per_input[i])
        t_out = add_tangents(t_out, per_input[i](tangents[i], outs[0], primals, ps));
    return JvpResult{outs, {t_out}};
  };
}

JvpFn zero_jvp(std::string prim) {
  return [prim](std::span<const Array> primals, std::span<const Array>, const Params& ps) {
    std::vector<Array> outs = bind(lookup(prim), {primals.begin(), primals.end()}, ps);
    return JvpResult{outs, std::vector<Array>(outs.size())};
  };
}

JvpFn linear_jvp(std::string prim) {
  return [prim](std::span<const Array> primals, std::span<const Array> tangents, const Params& ps) {
    const Primitive& p = lookup(prim);
    std::vector<Array> outs = bind(p, {primals.begin(), primals.end()}, ps);
    std::vector<Array> ts;
    for (size_t i = 0; i < tangents.size(); ++i) ts.push_back(instantiate(tangents[i], primals[i].aval()));
    return JvpResult{outs, bind(p, ts, ps)};
  };
}

}  // namespace jitx::detail

namespace jitx::detail {
void grad_error(const std::string& op, const std::string& msg) { throw TypeError(error_message(op, msg)); }
void grad_error(const std::string& op, const std::string& msg, const Loc& loc) {
  ApiScope s(loc, nullptr);
  throw TypeError(error_message(op, msg));
}
std::shared_ptr<void> call_site_scope(const Loc& loc) { return std::make_shared<ApiScope>(loc, nullptr); }
Array grad_seed(const Array& value) { return ones_like(value); }
}  // namespace jitx::detail
