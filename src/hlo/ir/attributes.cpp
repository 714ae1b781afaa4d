// Typed HLO attributes: reading and validating them from Params, writing them back, XLA-style text both ways.
#include "hlo/ir/attributes.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <utility>

#include "core/errors.h"
#include "hlo/ir/attribute_util.h"
#include "hlo/ir/hlo.h"

namespace jitx::hlo {
namespace {
using Ints = std::vector<int64_t>;
using detail::Params;
using namespace attribute_util;

// --- structs made of plain fields: each lists its fields once, for the four visitors below ------------
//
// A field has its Params key and its XLA text name. An optional one is empty (false, its default) when absent
// and is not printed then.
enum class Need { kRequired, kOptional };

struct AttrReader {
  const Instruction& inst;
  void list(std::string_view key, std::string_view, Ints& v, Need need) {
    v = need == Need::kRequired ? list_attr(inst, key) : list_attr(inst, key, {});
  }
  void integer(std::string_view key, std::string_view, int64_t& v, Need need, int64_t dflt = 0) {
    v = need == Need::kRequired ? int_attr(inst, key) : int_attr(inst, key, dflt);
  }
  void axis_list(std::string_view key, std::string_view text, int64_t& v) { integer(key, text, v, Need::kRequired); }
  void flag(std::string_view key, std::string_view, bool& v) {
    const bool* b = find_attr<bool>(inst, key, "true or false");
    v = b && *b;
  }
};

struct AttrWriter {
  Params& p;
  void list(std::string_view key, std::string_view, const Ints& v, Need) { p.set(std::string(key), v); }
  void integer(std::string_view key, std::string_view, int64_t v, Need, int64_t = 0) { p.set(std::string(key), v); }
  void axis_list(std::string_view key, std::string_view, int64_t v) { p.set(std::string(key), v); }
  void flag(std::string_view key, std::string_view, bool v) { p.set(std::string(key), v); }
};

struct TextWriter {
  std::vector<std::string> parts;
  void list(std::string_view, std::string_view text, const Ints& v, Need need) {
    if (need == Need::kRequired || !v.empty()) parts.push_back(fmt::format("{}={}", text, list_str(v)));
  }
  void integer(std::string_view, std::string_view text, int64_t v, Need need, int64_t dflt = 0) {
    if (need == Need::kRequired || v != dflt) parts.push_back(fmt::format("{}={}", text, v));
  }
  void axis_list(std::string_view, std::string_view text, int64_t v) {
    parts.push_back(fmt::format("{}={{{}}}", text, v));
  }
  void flag(std::string_view, std::string_view text, bool v) {
    if (v) parts.push_back(fmt::format("{}=true", text));
  }
};

struct TextReader {
  TextFields& f;
  void list(std::string_view, std::string_view text, Ints& v, Need need) {
    auto s = need == Need::kRequired ? std::optional(f.need(text)) : f.take(text);
    v = s ? parse_list(*s, f.text()) : Ints{};
  }
  void integer(std::string_view, std::string_view text, int64_t& v, Need need, int64_t dflt = 0) {
    auto s = need == Need::kRequired ? std::optional(f.need(text)) : f.take(text);
    v = s ? parse_int(*s, f.text()) : dflt;
  }
  void axis_list(std::string_view, std::string_view text, int64_t& v) {
    Ints l = parse_list(f.need(text), f.text());
    if (l.size() != 1) bad_text(f.text(), fmt::format("{} must name one axis", text));
    v = l[0];
  }
  void flag(std::string_view, std::string_view text, bool& v) {
    auto s = f.take(text);
    if (s && *s != "true" && *s != "false") bad_text(f.text(), fmt::format("{}={} is not true or false", text, *s));
    v = s && *s == "true";
  }
};

template <class X>
struct Fields;

template <>
struct Fields<DotDimensionNumbers> {
  template <class V, class D>
  static void visit(V& v, D& d) {
    v.list("lhs_batch_dimensions", "lhs_batch_dims", d.lhs_batch_dims, Need::kOptional);
    v.list("lhs_contracting_dimensions", "lhs_contracting_dims", d.lhs_contracting_dims, Need::kRequired);
    v.list("rhs_batch_dimensions", "rhs_batch_dims", d.rhs_batch_dims, Need::kOptional);
    v.list("rhs_contracting_dimensions", "rhs_contracting_dims", d.rhs_contracting_dims, Need::kRequired);
  }
};

template <>
struct Fields<GatherDimensionNumbers> {
  template <class V, class D>
  static void visit(V& v, D& d) {
    v.list("offset_dims", "offset_dims", d.offset_dims, Need::kRequired);
    v.list("collapsed_slice_dims", "collapsed_slice_dims", d.collapsed_slice_dims, Need::kRequired);
    v.list("operand_batching_dims", "operand_batching_dims", d.operand_batching_dims, Need::kOptional);
    v.list("start_indices_batching_dims", "start_indices_batching_dims", d.start_indices_batching_dims,
           Need::kOptional);
    v.list("start_index_map", "start_index_map", d.start_index_map, Need::kRequired);
    v.integer("index_vector_dim", "index_vector_dim", d.index_vector_dim, Need::kRequired);
    v.list("slice_sizes", "slice_sizes", d.slice_sizes, Need::kRequired);
    v.flag("indices_are_sorted", "indices_are_sorted", d.indices_are_sorted);
  }
};

template <>
struct Fields<ScatterDimensionNumbers> {
  template <class V, class D>
  static void visit(V& v, D& d) {
    v.list("update_window_dims", "update_window_dims", d.update_window_dims, Need::kRequired);
    v.list("inserted_window_dims", "inserted_window_dims", d.inserted_window_dims, Need::kRequired);
    v.list("input_batching_dims", "input_batching_dims", d.input_batching_dims, Need::kOptional);
    v.list("scatter_indices_batching_dims", "scatter_indices_batching_dims", d.scatter_indices_batching_dims,
           Need::kOptional);
    v.list("scatter_dims_to_operand_dims", "scatter_dims_to_operand_dims", d.scatter_dims_to_operand_dims,
           Need::kRequired);
    v.integer("index_vector_dim", "index_vector_dim", d.index_vector_dim, Need::kRequired);
    v.flag("indices_are_sorted", "indices_are_sorted", d.indices_are_sorted);
    v.flag("unique_indices", "unique_indices", d.unique_indices);
  }
};

template <>
struct Fields<SortConfig> {
  template <class V, class D>
  static void visit(V& v, D& d) {
    v.axis_list("dimension", "dimensions", d.dimension);
    v.flag("is_stable", "is_stable", d.is_stable);
    v.integer("num_keys", "num_keys", d.num_keys, Need::kOptional, 1);
  }
};

template <>
struct Fields<PaddingConfig> {
  template <class V, class D>
  static void visit(V& v, D& d) {
    v.list("edge_padding_low", "", d.low, Need::kRequired);
    v.list("edge_padding_high", "", d.high, Need::kRequired);
    v.list("interior_padding", "", d.interior, Need::kRequired);
  }
};

template <>
struct Fields<SliceConfig> {
  template <class V, class D>
  static void visit(V& v, D& d) {
    v.list("start_indices", "", d.start_indices, Need::kRequired);
    v.list("limit_indices", "", d.limit_indices, Need::kRequired);
    v.list("strides", "", d.strides, Need::kOptional);
  }
};

/// Checks that each list field has one entry per axis of the rank-n operand (the fields of pad and slice).
struct PerAxisCheck {
  const Instruction& inst;
  int64_t n;
  void list(std::string_view key, std::string_view, const Ints& v, Need) {
    check_size(inst, key, v, n, "one per operand axis");
  }
};

template <class X>
X read_fields(const Instruction& i) {
  X x;
  AttrReader r{i};
  Fields<X>::visit(r, x);
  return x;
}
template <class X>
void write_fields(const X& x, Params& p) {
  AttrWriter w{p};
  Fields<X>::visit(w, x);
}
template <class X>
std::string print_fields(const X& x) {
  TextWriter w;
  Fields<X>::visit(w, x);
  return fmt::format("{}", fmt::join(w.parts, ", "));
}
template <class X>
X parse_fields(std::string_view text) {
  TextFields f(text);
  TextReader r{f};
  X x;
  Fields<X>::visit(r, x);
  f.finish();
  return x;
}

/// The number of index components an index array of rank `rank` gives per start (index_vector_dim == rank: 1).
int64_t index_vector_size(const Instruction& i, size_t indices_operand, int64_t ivd) {
  const Shape& s = i.operand(indices_operand)->shape;
  return ivd == s.rank() ? 1 : s.dims.at(ivd);
}

// --- windows ----------------------------------------------------------------------------------------

/// A window from the given attribute keys (size from `dims` when given, else read), defaults for absent ones.
Window read_window(const Instruction& i, int64_t rank, const Ints* dims, std::string_view strides_key,
                   std::string_view base_key, std::string_view window_key) {
  Window w;
  w.dimensions = dims ? *dims : list_attr(i, "window_dimensions");
  w.strides = list_attr(i, strides_key, Ints(rank, 1));
  w.base_dilations = list_attr(i, base_key, Ints(rank, 1));
  w.window_dilations = list_attr(i, window_key, Ints(rank, 1));
  Ints pad = list_attr(i, "padding", Ints(2 * rank, 0));
  int64_t n = rank;
  if (!dims) check_size(i, "window_dimensions", w.dimensions, n, "one per operand axis");
  check_size(i, strides_key, w.strides, n, "one per window axis");
  check_size(i, base_key, w.base_dilations, n, "one per window axis");
  check_size(i, window_key, w.window_dilations, n, "one per window axis");
  check_size(i, "padding", pad, 2 * n, "a (low, high) pair per window axis");
  if (!dims) check_at_least(i, "window_dimensions", w.dimensions, 1);
  check_at_least(i, strides_key, w.strides, 1);
  check_at_least(i, base_key, w.base_dilations, 1);
  check_at_least(i, window_key, w.window_dilations, 1);
  for (int64_t k = 0; k < n; ++k) w.padding.push_back({pad[2 * k], pad[2 * k + 1]});
  return w;
}

Ints flat_padding(const Window& w) {
  Ints pad;
  for (auto& p : w.padding) pad.insert(pad.end(), {p.low, p.high});
  return pad;
}

std::string by_x(const Ints& v) { return fmt::format("{}", fmt::join(v, "x")); }
bool all_equal(const Ints& v, int64_t x) { return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e == x; }); }

/// "{size=2x2 stride=...}" without the "window=".
std::string window_body(const Window& w) {
  if (w.rank() == 0) return "{}";
  std::vector<std::string> parts{"size=" + by_x(w.dimensions)};
  if (!all_equal(w.strides, 1)) parts.push_back("stride=" + by_x(w.strides));
  if (std::any_of(w.padding.begin(), w.padding.end(), [](const WindowPadding& p) { return p.low || p.high; })) {
    std::vector<std::string> pads;
    for (auto& p : w.padding) pads.push_back(fmt::format("{}_{}", p.low, p.high));
    parts.push_back(fmt::format("pad={}", fmt::join(pads, "x")));
  }
  if (!all_equal(w.base_dilations, 1)) parts.push_back("lhs_dilate=" + by_x(w.base_dilations));
  if (!all_equal(w.window_dilations, 1)) parts.push_back("rhs_dilate=" + by_x(w.window_dilations));
  return fmt::format("{{{}}}", fmt::join(parts, " "));
}

Window parse_window_body(std::string_view s, std::string_view whole) {
  s = trim(s);
  if (s.size() < 2 || s.front() != '{' || s.back() != '}') bad_text(whole, "window must be {...}");
  Window w;
  std::vector<std::pair<std::string_view, std::string_view>> comps;
  for (auto part : split_top(s.substr(1, s.size() - 2), ' ')) {
    if (part.empty()) continue;
    size_t eq = part.find('=');
    if (eq == std::string_view::npos) bad_text(whole, fmt::format("window part '{}' is not key=value", part));
    comps.emplace_back(part.substr(0, eq), part.substr(eq + 1));
  }
  auto find = [&](std::string_view key) -> std::optional<std::string_view> {
    for (auto& [k, v] : comps)
      if (k == key) return v;
    return std::nullopt;
  };
  for (auto& [k, v] : comps)
    if (k != "size" && k != "stride" && k != "pad" && k != "lhs_dilate" && k != "rhs_dilate")
      bad_text(whole, fmt::format("unknown window part {}", k));
  if (comps.empty()) return w;
  auto size = find("size");
  if (!size) bad_text(whole, "window needs a size");
  w.dimensions = parse_by_x(*size, whole);
  size_t n = w.dimensions.size();
  auto axes = [&](std::string_view key, int64_t dflt) {
    auto v = find(key);
    Ints out = v ? parse_by_x(*v, whole) : Ints(n, dflt);
    if (out.size() != n) bad_text(whole, fmt::format("window {} needs {} entries", key, n));
    return out;
  };
  w.strides = axes("stride", 1);
  w.base_dilations = axes("lhs_dilate", 1);
  w.window_dilations = axes("rhs_dilate", 1);
  w.padding.assign(n, {});
  if (auto pad = find("pad")) {
    auto pads = split_top(*pad, 'x');
    if (pads.size() != n) bad_text(whole, fmt::format("window pad needs {} entries", n));
    for (size_t k = 0; k < n; ++k) {
      size_t us = pads[k].find('_', 1);  // the low edge may be negative: "-1_2"
      if (us == std::string_view::npos) bad_text(whole, fmt::format("pad '{}' is not low_high", pads[k]));
      w.padding[k] = {parse_int(pads[k].substr(0, us), whole), parse_int(pads[k].substr(us + 1), whole)};
    }
  }
  return w;
}

// --- conv dim labels ----------------------------------------------------------------------------------

/// "b01f" from (batch axis, feature axis, spatial axes) with the batch and feature letters given.
std::string labels(int64_t first, int64_t second, const Ints& spatial, char a, char b) {
  std::string s(spatial.size() + 2, '?');
  s.at(first) = a;
  s.at(second) = b;
  for (size_t k = 0; k < spatial.size(); ++k) s.at(spatial[k]) = static_cast<char>('0' + k);
  return s;
}

void parse_labels(std::string_view s, char a, char b, int64_t& first, int64_t& second, Ints& spatial,
                  std::string_view whole) {
  first = second = -1;
  spatial.assign(s.size() >= 2 ? s.size() - 2 : 0, -1);
  for (size_t k = 0; k < s.size(); ++k) {
    char c = s[k];
    int64_t* slot = c == a ? &first : c == b ? &second : nullptr;
    if (!slot && std::isdigit(static_cast<unsigned char>(c)) && static_cast<size_t>(c - '0') < spatial.size())
      slot = &spatial[c - '0'];
    if (!slot || *slot != -1)
      bad_text(whole, fmt::format("dim labels '{}' are not {}, {} and spatial digits", s, a, b));
    *slot = static_cast<int64_t>(k);
  }
  if (first < 0 || second < 0) bad_text(whole, fmt::format("dim labels '{}' lack {} or {}", s, a, b));
}

Ints spec(int64_t first, int64_t second, const Ints& spatial) {
  Ints s{first, second};
  s.insert(s.end(), spatial.begin(), spatial.end());
  return s;
}

void check_spec(const Instruction& i, std::string_view key, const Ints& s, int64_t rank, std::string_view what) {
  check_size(i, key, s, rank, fmt::format("one per axis of the {}", what));
  check_axes(i, key, s, rank, what);
}

}  // namespace

// --- dot --------------------------------------------------------------------------------------------

DotDimensionNumbers DotDimensionNumbers::of(const Instruction& i) {
  expect_opcode(i, {Opcode::kDot});
  auto d = read_fields<DotDimensionNumbers>(i);
  check_size(i, "rhs_batch_dimensions", d.rhs_batch_dims, std::ssize(d.lhs_batch_dims), "one per lhs batch axis");
  check_size(i, "rhs_contracting_dimensions", d.rhs_contracting_dims, std::ssize(d.lhs_contracting_dims),
             "one per lhs contracting axis");
  check_axes(i, "lhs_batch_dimensions", d.lhs_batch_dims, rank_of(i, 0), "lhs");
  check_axes(i, "rhs_batch_dimensions", d.rhs_batch_dims, rank_of(i, 1), "rhs");
  check_axes(i, "lhs_contracting_dimensions", d.lhs_contracting_dims, rank_of(i, 0), "lhs");
  check_axes(i, "rhs_contracting_dimensions", d.rhs_contracting_dims, rank_of(i, 1), "rhs");
  check_disjoint(i, "lhs_batch_dimensions", d.lhs_batch_dims, "lhs_contracting_dimensions", d.lhs_contracting_dims);
  check_disjoint(i, "rhs_batch_dimensions", d.rhs_batch_dims, "rhs_contracting_dimensions", d.rhs_contracting_dims);
  return d;
}
void DotDimensionNumbers::set_on(Params& attrs) const { write_fields(*this, attrs); }
std::string DotDimensionNumbers::str() const { return print_fields(*this); }
DotDimensionNumbers DotDimensionNumbers::parse(std::string_view text) {
  return parse_fields<DotDimensionNumbers>(text);
}

// --- convolution --------------------------------------------------------------------------------------

std::string ConvDimensionNumbers::str() const {
  return fmt::format("dim_labels={}_{}->{}",
                     labels(input_batch_dimension, input_feature_dimension, input_spatial_dimensions, 'b', 'f'),
                     labels(kernel_output_feature_dimension, kernel_input_feature_dimension, kernel_spatial_dimensions,
                            'o', 'i'),
                     labels(output_batch_dimension, output_feature_dimension, output_spatial_dimensions, 'b', 'f'));
}

ConvDimensionNumbers ConvDimensionNumbers::parse(std::string_view text) {
  TextFields f(text);
  std::string_view v = f.need("dim_labels");
  f.finish();
  size_t us = v.find('_'), arrow = v.find("->");
  if (us == std::string_view::npos || arrow == std::string_view::npos || us > arrow)
    bad_text(text, "dim_labels must be <lhs>_<rhs>-><out>");
  ConvDimensionNumbers d;
  parse_labels(v.substr(0, us), 'b', 'f', d.input_batch_dimension, d.input_feature_dimension,
               d.input_spatial_dimensions, text);
  parse_labels(v.substr(us + 1, arrow - us - 1), 'o', 'i', d.kernel_output_feature_dimension,
               d.kernel_input_feature_dimension, d.kernel_spatial_dimensions, text);
  parse_labels(v.substr(arrow + 2), 'b', 'f', d.output_batch_dimension, d.output_feature_dimension,
               d.output_spatial_dimensions, text);
  if (d.kernel_spatial_dimensions.size() != d.input_spatial_dimensions.size() ||
      d.output_spatial_dimensions.size() != d.input_spatial_dimensions.size())
    bad_text(text, "lhs, rhs and output need the same number of spatial axes");
  return d;
}

ConvConfig ConvConfig::of(const Instruction& i) {
  expect_opcode(i, {Opcode::kConvolution});
  const Ints &ls = list_attr(i, "lhs_spec"), &rs = list_attr(i, "rhs_spec"), &os = list_attr(i, "out_spec");
  check_spec(i, "lhs_spec", ls, rank_of(i, 0), "lhs");
  check_spec(i, "rhs_spec", rs, rank_of(i, 1), "rhs");
  check_spec(i, "out_spec", os, i.shape.rank(), "result");
  if (ls.size() < 2 || rs.size() != ls.size() || os.size() != ls.size())
    bad(i, "lhs, rhs and result need equal ranks of at least 2 (batch and feature axes)");
  ConvConfig c;
  auto& d = c.dnums;
  d.input_batch_dimension = ls[0], d.input_feature_dimension = ls[1];
  d.input_spatial_dimensions.assign(ls.begin() + 2, ls.end());
  d.kernel_output_feature_dimension = rs[0], d.kernel_input_feature_dimension = rs[1];
  d.kernel_spatial_dimensions.assign(rs.begin() + 2, rs.end());
  d.output_batch_dimension = os[0], d.output_feature_dimension = os[1];
  d.output_spatial_dimensions.assign(os.begin() + 2, os.end());
  Ints size;
  for (auto a : d.kernel_spatial_dimensions) size.push_back(i.operand(1)->shape.dims[a]);
  c.window = read_window(i, d.num_spatial_dims(), &size, "window_strides", "lhs_dilation", "rhs_dilation");
  c.feature_group_count = int_attr(i, "feature_group_count", 1);
  c.batch_group_count = int_attr(i, "batch_group_count", 1);
  if (c.feature_group_count < 1 || c.batch_group_count < 1)
    bad(i, fmt::format("feature_group_count={} and batch_group_count={} must be positive", c.feature_group_count,
                       c.batch_group_count));
  return c;
}

Ints ConvDimensionNumbers::lhs_spec() const {
  return spec(input_batch_dimension, input_feature_dimension, input_spatial_dimensions);
}
Ints ConvDimensionNumbers::rhs_spec() const {
  return spec(kernel_output_feature_dimension, kernel_input_feature_dimension, kernel_spatial_dimensions);
}
Ints ConvDimensionNumbers::out_spec() const {
  return spec(output_batch_dimension, output_feature_dimension, output_spatial_dimensions);
}

void ConvConfig::set_on(Params& attrs) const {
  attrs.set("lhs_spec", dnums.lhs_spec());
  attrs.set("rhs_spec", dnums.rhs_spec());
  attrs.set("out_spec", dnums.out_spec());
  attrs.set("window_strides", window.strides);
  attrs.set("padding", flat_padding(window));
  attrs.set("lhs_dilation", window.base_dilations);
  attrs.set("rhs_dilation", window.window_dilations);
  attrs.set("feature_group_count", feature_group_count);
  attrs.set("batch_group_count", batch_group_count);
}

std::string ConvConfig::str() const {
  std::string s = fmt::format("window={}, {}", window_body(window), dnums.str());
  if (feature_group_count != 1) s += fmt::format(", feature_group_count={}", feature_group_count);
  if (batch_group_count != 1) s += fmt::format(", batch_group_count={}", batch_group_count);
  return s;
}

ConvConfig ConvConfig::parse(std::string_view text) {
  TextFields f(text);
  ConvConfig c;
  c.window = parse_window_body(f.need("window"), text);
  c.dnums = ConvDimensionNumbers::parse(fmt::format("dim_labels={}", f.need("dim_labels")));
  auto fg = f.take("feature_group_count"), bg = f.take("batch_group_count");
  c.feature_group_count = fg ? parse_int(*fg, text) : 1;
  c.batch_group_count = bg ? parse_int(*bg, text) : 1;
  f.finish();
  if (c.window.rank() != c.dnums.num_spatial_dims()) bad_text(text, "the window needs one entry per spatial axis");
  return c;
}

// --- reduce-window's window -------------------------------------------------------------------------

Window Window::of(const Instruction& i) {
  expect_opcode(i, {Opcode::kReduceWindow});
  return read_window(i, rank_of(i, 0), nullptr, "window_strides", "base_dilations", "window_dilations");
}

void Window::set_on(Params& attrs) const {
  attrs.set("window_dimensions", dimensions);
  attrs.set("window_strides", strides);
  attrs.set("padding", flat_padding(*this));
  attrs.set("base_dilations", base_dilations);
  attrs.set("window_dilations", window_dilations);
}

std::string Window::str() const { return "window=" + window_body(*this); }

Window Window::parse(std::string_view text) {
  TextFields f(text);
  Window w = parse_window_body(f.need("window"), text);
  f.finish();
  return w;
}

// --- gather and scatter -------------------------------------------------------------------------------

GatherDimensionNumbers GatherDimensionNumbers::of(const Instruction& i) {
  expect_opcode(i, {Opcode::kGather});
  auto d = read_fields<GatherDimensionNumbers>(i);
  int64_t xr = rank_of(i, 0), ir = rank_of(i, 1);
  check_axes(i, "offset_dims", d.offset_dims, i.shape.rank(), "result");
  if (!std::is_sorted(d.offset_dims.begin(), d.offset_dims.end()))
    bad(i, fmt::format("offset_dims={} must be sorted", list_str(d.offset_dims)));
  check_axes(i, "collapsed_slice_dims", d.collapsed_slice_dims, xr, "operand");
  check_axes(i, "operand_batching_dims", d.operand_batching_dims, xr, "operand");
  check_axes(i, "start_index_map", d.start_index_map, xr, "operand");
  check_disjoint(i, "collapsed_slice_dims", d.collapsed_slice_dims, "operand_batching_dims", d.operand_batching_dims);
  check_disjoint(i, "start_index_map", d.start_index_map, "operand_batching_dims", d.operand_batching_dims);
  if (d.index_vector_dim < 0 || d.index_vector_dim > ir)
    bad(i, fmt::format("index_vector_dim={} is outside the rank-{} indices (0..{})", d.index_vector_dim, ir, ir));
  check_axes(i, "start_indices_batching_dims", d.start_indices_batching_dims, ir, "indices");
  check_disjoint(i, "start_indices_batching_dims", d.start_indices_batching_dims, "index_vector_dim",
                 Ints{d.index_vector_dim});
  check_size(i, "start_indices_batching_dims", d.start_indices_batching_dims, std::ssize(d.operand_batching_dims),
             "one per operand batching axis");
  check_size(i, "slice_sizes", d.slice_sizes, xr, "one per operand axis");
  check_size(i, "start_index_map", d.start_index_map, index_vector_size(i, 1, d.index_vector_dim),
             "one per index component");
  check_size(i, "offset_dims", d.offset_dims,
             xr - std::ssize(d.collapsed_slice_dims) - std::ssize(d.operand_batching_dims),
             "one per operand axis neither collapsed nor batching");
  check_size(i, "offset_dims", d.offset_dims, i.shape.rank() - (ir - (d.index_vector_dim < ir)),
             "result rank minus the indices' batch axes");
  for (int64_t a = 0; a < xr; ++a) {
    bool one = std::count(d.collapsed_slice_dims.begin(), d.collapsed_slice_dims.end(), a) ||
               std::count(d.operand_batching_dims.begin(), d.operand_batching_dims.end(), a);
    if (d.slice_sizes[a] < 0 || (one && d.slice_sizes[a] > 1))
      bad(i, fmt::format("slice_sizes={} has {} at axis {}, expected {}", list_str(d.slice_sizes), d.slice_sizes[a], a,
                         one ? "0 or 1 (a collapsed or batching axis)" : "a size >= 0"));
  }
  return d;
}
void GatherDimensionNumbers::set_on(Params& attrs) const { write_fields(*this, attrs); }
std::string GatherDimensionNumbers::str() const { return print_fields(*this); }
GatherDimensionNumbers GatherDimensionNumbers::parse(std::string_view text) {
  return parse_fields<GatherDimensionNumbers>(text);
}

ScatterDimensionNumbers ScatterDimensionNumbers::of(const Instruction& i) {
  expect_opcode(i, {Opcode::kScatter});
  auto d = read_fields<ScatterDimensionNumbers>(i);
  int64_t xr = rank_of(i, 0), ir = rank_of(i, 1), ur = rank_of(i, 2);
  check_axes(i, "update_window_dims", d.update_window_dims, ur, "updates");
  if (!std::is_sorted(d.update_window_dims.begin(), d.update_window_dims.end()))
    bad(i, fmt::format("update_window_dims={} must be sorted", list_str(d.update_window_dims)));
  check_axes(i, "inserted_window_dims", d.inserted_window_dims, xr, "operand");
  check_axes(i, "input_batching_dims", d.input_batching_dims, xr, "operand");
  check_axes(i, "scatter_dims_to_operand_dims", d.scatter_dims_to_operand_dims, xr, "operand");
  check_disjoint(i, "inserted_window_dims", d.inserted_window_dims, "input_batching_dims", d.input_batching_dims);
  check_disjoint(i, "scatter_dims_to_operand_dims", d.scatter_dims_to_operand_dims, "input_batching_dims",
                 d.input_batching_dims);
  if (d.index_vector_dim < 0 || d.index_vector_dim > ir)
    bad(i, fmt::format("index_vector_dim={} is outside the rank-{} indices (0..{})", d.index_vector_dim, ir, ir));
  check_axes(i, "scatter_indices_batching_dims", d.scatter_indices_batching_dims, ir, "indices");
  check_disjoint(i, "scatter_indices_batching_dims", d.scatter_indices_batching_dims, "index_vector_dim",
                 Ints{d.index_vector_dim});
  check_size(i, "scatter_indices_batching_dims", d.scatter_indices_batching_dims, std::ssize(d.input_batching_dims),
             "one per input batching axis");
  check_size(i, "scatter_dims_to_operand_dims", d.scatter_dims_to_operand_dims,
             index_vector_size(i, 1, d.index_vector_dim), "one per index component");
  check_size(i, "update_window_dims", d.update_window_dims,
             xr - std::ssize(d.inserted_window_dims) - std::ssize(d.input_batching_dims),
             "one per operand axis neither inserted nor batching");
  check_size(i, "update_window_dims", d.update_window_dims, ur - (ir - (d.index_vector_dim < ir)),
             "updates rank minus the indices' batch axes");
  return d;
}
void ScatterDimensionNumbers::set_on(Params& attrs) const { write_fields(*this, attrs); }
std::string ScatterDimensionNumbers::str() const { return print_fields(*this); }
ScatterDimensionNumbers ScatterDimensionNumbers::parse(std::string_view text) {
  return parse_fields<ScatterDimensionNumbers>(text);
}

// --- pad and slice --------------------------------------------------------------------------------------

PaddingConfig PaddingConfig::of(const Instruction& i) {
  expect_opcode(i, {Opcode::kPad});
  auto p = read_fields<PaddingConfig>(i);
  PerAxisCheck check{i, rank_of(i, 0)};
  Fields<PaddingConfig>::visit(check, p);
  check_at_least(i, "interior_padding", p.interior, 0);
  return p;
}
void PaddingConfig::set_on(Params& attrs) const { write_fields(*this, attrs); }

std::string PaddingConfig::str() const {
  std::vector<std::string> dims;
  for (size_t k = 0; k < low.size(); ++k) dims.push_back(fmt::format("{}_{}_{}", low[k], high[k], interior[k]));
  return dims.empty() ? "padding={}" : fmt::format("padding={}", fmt::join(dims, "x"));
}

PaddingConfig PaddingConfig::parse(std::string_view text) {
  TextFields f(text);
  std::string_view v = f.need("padding");
  f.finish();
  PaddingConfig p;
  if (v == "{}") return p;
  for (auto dim : split_top(v, 'x')) {
    // low_high_interior, where low and high may be negative: split at the '_' that follow a digit.
    Ints parts;
    size_t b = 0;
    for (size_t k = 1; k < dim.size(); ++k)
      if (dim[k] == '_') parts.push_back(parse_int(dim.substr(b, k - b), text)), b = k + 1;
    parts.push_back(parse_int(dim.substr(b), text));
    if (parts.size() != 3) bad_text(text, fmt::format("'{}' is not low_high_interior", dim));
    p.low.push_back(parts[0]);
    p.high.push_back(parts[1]);
    p.interior.push_back(parts[2]);
  }
  return p;
}

SliceConfig SliceConfig::of(const Instruction& i) {
  expect_opcode(i, {Opcode::kSlice});
  auto s = read_fields<SliceConfig>(i);
  PerAxisCheck check{i, rank_of(i, 0)};
  if (!i.attrs.has("strides")) s.strides.assign(static_cast<size_t>(check.n), 1);
  Fields<SliceConfig>::visit(check, s);
  check_at_least(i, "strides", s.strides, 1);
  return s;
}
void SliceConfig::set_on(Params& attrs) const { write_fields(*this, attrs); }

std::string SliceConfig::str() const {
  std::vector<std::string> r;
  for (size_t k = 0; k < start_indices.size(); ++k)
    r.push_back(strides[k] == 1 ? fmt::format("[{}:{}]", start_indices[k], limit_indices[k])
                                : fmt::format("[{}:{}:{}]", start_indices[k], limit_indices[k], strides[k]));
  return fmt::format("slice={{{}}}", fmt::join(r, ", "));
}

SliceConfig SliceConfig::parse(std::string_view text) {
  TextFields f(text);
  std::string_view v = f.need("slice");
  f.finish();
  if (v.size() < 2 || v.front() != '{' || v.back() != '}') bad_text(text, "slice must be {[start:limit:stride], ...}");
  SliceConfig s;
  for (auto r : split_top(v.substr(1, v.size() - 2), ',')) {
    if (r.size() < 2 || r.front() != '[' || r.back() != ']')
      bad_text(text, fmt::format("'{}' is not [start:limit]", r));
    auto parts = split_top(r.substr(1, r.size() - 2), ':');
    if (parts.size() != 2 && parts.size() != 3) bad_text(text, fmt::format("'{}' is not [start:limit:stride]", r));
    s.start_indices.push_back(parse_int(parts[0], text));
    s.limit_indices.push_back(parse_int(parts[1], text));
    s.strides.push_back(parts.size() == 3 ? parse_int(parts[2], text) : 1);
  }
  return s;
}

// --- sort ---------------------------------------------------------------------------------------------

SortConfig SortConfig::of(const Instruction& i) {
  expect_opcode(i, {Opcode::kSort});
  auto s = read_fields<SortConfig>(i);
  if (i.operands.empty()) bad(i, "sort needs an operand");
  if (s.dimension < 0 || s.dimension >= rank_of(i, 0))
    bad(i, fmt::format("dimension={} is not an axis of the rank-{} operands", s.dimension, rank_of(i, 0)));
  if (s.num_keys < 1 || s.num_keys > static_cast<int64_t>(i.operands.size()))
    bad(i, fmt::format("num_keys={} is not in 1..{} (the operands)", s.num_keys, i.operands.size()));
  return s;
}
void SortConfig::set_on(Params& attrs) const { write_fields(*this, attrs); }
std::string SortConfig::str() const { return print_fields(*this); }
SortConfig SortConfig::parse(std::string_view text) { return parse_fields<SortConfig>(text); }

}  // namespace jitx::hlo
