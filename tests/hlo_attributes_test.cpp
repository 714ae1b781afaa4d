// Typed HLO attributes (hlo/ir/attributes.h) and the shared gather/scatter index math (hlo/ir/indexing.h).
#include <catch2/catch.hpp>

#include <vector>

#include "backend_test_util.h"
#include "hlo/ir/attributes.h"
#include "hlo/ir/indexing.h"
#include "hlo/ir/hlo_parser.h"

using namespace jitx;
using namespace jitx::hlo;
using Catch::Matchers::Contains;
using Ints = std::vector<int64_t>;

namespace {

/// The named instruction of the entry computation of `text` (parsed, not verified).
struct Parsed {
  std::unique_ptr<Module> m;
  const Instruction& operator[](std::string_view name) const { return *m->entry->find(name); }
};
Parsed parsed(const std::string& text) { return Parsed{parse_hlo(text)}; }

template <class X>
void round_trips(const X& x, const std::string& spelled) {
  INFO(x.str());
  CHECK(x.str() == spelled);
  CHECK(X::parse(x.str()) == x);
}

detail::Literal ints_literal(DType d, const Ints& dims, const Ints& v) {
  auto l = detail::Literal::make(d, dims);
  for (size_t k = 0; k < v.size(); ++k) l.set_i64(static_cast<int64_t>(k), v[k]);
  return l;
}
Ints values(const detail::Literal& l) {
  Ints v;
  for (int64_t k = 0; k < l.size(); ++k) v.push_back(l.get_i64(k));
  return v;
}

/// The module's result on the CPU backend and on the interpreter, which must agree.
Ints run_both(const std::string& text, const std::vector<detail::Literal>& args) {
  auto cpu = jitx::testing::run(jitx::testing::native(), text, args);
  auto ref = jitx::testing::run(jitx::testing::interp(), text, args);
  REQUIRE(cpu.size() == 1);
  CHECK(values(cpu[0]) == values(ref[0]));
  return values(cpu[0]);
}

const char* kDot = R"(HloModule m
ENTRY %e (a: f32[2,3,4], b: f32[2,4,5]) -> f32[2,3,5] {
  %a = f32[2,3,4] parameter(0)
  %b = f32[2,4,5] parameter(1)
  ROOT %d = f32[2,3,5] dot(%a, %b), lhs_batch_dimensions={0}, lhs_contracting_dimensions={2}, rhs_batch_dimensions={0}, rhs_contracting_dimensions={1}
}
)";
}  // namespace

TEST_CASE("typed attributes print XLA's spelling and parse it back", "[hlo][attributes]") {
  round_trips(DotDimensionNumbers{{0}, {2}, {0}, {1}},
              "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}");
  round_trips(DotDimensionNumbers{{}, {1}, {}, {0}}, "lhs_contracting_dims={1}, rhs_contracting_dims={0}");

  ConvDimensionNumbers nhwc{0, 3, {1, 2}, 3, 2, {0, 1}, 0, 3, {1, 2}};
  round_trips(nhwc, "dim_labels=b01f_01io->b01f");
  ConvDimensionNumbers nchw{0, 1, {2, 3}, 0, 1, {2, 3}, 0, 1, {2, 3}};
  round_trips(nchw, "dim_labels=bf01_oi01->bf01");
  CHECK(nhwc.lhs_spec() == Ints{0, 3, 1, 2});
  CHECK(nhwc.rhs_spec() == Ints{3, 2, 0, 1});

  Window w{{3, 3}, {2, 1}, {1, 1}, {1, 2}, {{1, 1}, {-1, 2}}};
  round_trips(w, "window={size=3x3 stride=2x1 pad=1_1x-1_2 rhs_dilate=1x2}");
  round_trips(Window{{2}, {1}, {1}, {1}, {{0, 0}}}, "window={size=2}");
  round_trips(Window{}, "window={}");
  round_trips(ConvConfig{nhwc, Window{{3, 3}, {1, 1}, {1, 1}, {1, 1}, {{1, 1}, {1, 1}}}, 2, 1},
              "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2");

  GatherDimensionNumbers g{{1}, {0}, {}, {}, {0}, 1, {1, 4}, false};
  round_trips(g,
              "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}");
  GatherDimensionNumbers gb{{}, {1}, {0}, {0}, {1}, 1, {1, 1}, true};
  round_trips(gb,
              "offset_dims={}, collapsed_slice_dims={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, "
              "start_index_map={1}, index_vector_dim=1, slice_sizes={1,1}, indices_are_sorted=true");
  ScatterDimensionNumbers s{{1}, {0}, {}, {}, {0}, 1, false, true};
  round_trips(s, "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                 "index_vector_dim=1, unique_indices=true");

  round_trips(PaddingConfig{{0, -1}, {1, 2}, {0, 1}}, "padding=0_1_0x-1_2_1");
  round_trips(PaddingConfig{}, "padding={}");
  round_trips(SliceConfig{{0, 1}, {4, 8}, {1, 2}}, "slice={[0:4], [1:8:2]}");
  round_trips(SortConfig{1, 2, true}, "dimensions={1}, is_stable=true, num_keys=2");
  round_trips(SortConfig{0, 1, false}, "dimensions={0}");
  round_trips(Comparison{ComparisonDirection::kLt, ComparisonType::kFloat}, "direction=LT, type=FLOAT");
  round_trips(Comparison{ComparisonDirection::kNe, ComparisonType::kUnsigned}, "direction=NE, type=UNSIGNED");
}

TEST_CASE("typed attribute text that does not parse throws CompileError", "[hlo][attributes]") {
  CHECK_THROWS_WITH(DotDimensionNumbers::parse("lhs_contracting_dims={1}"),
                    Contains("rhs_contracting_dims is missing"));
  CHECK_THROWS_WITH(DotDimensionNumbers::parse("lhs_contracting_dims={1}, rhs_contracting_dims={x}"),
                    Contains("'x' is not an integer"));
  CHECK_THROWS_WITH(DotDimensionNumbers::parse("lhs_contracting_dims={1}, rhs_contracting_dims={0}, foo=1"),
                    Contains("unknown attribute foo"));
  CHECK_THROWS_AS(ConvDimensionNumbers::parse("dim_labels=b01f_01io"), CompileError);
  CHECK_THROWS_AS(ConvDimensionNumbers::parse("dim_labels=b0ff_01io->b01f"), CompileError);
  CHECK_THROWS_WITH(Window::parse("window={stride=2}"), Contains("window needs a size"));
  CHECK_THROWS_WITH(Window::parse("window={size=2x2 stride=1}"), Contains("window stride needs 2 entries"));
  CHECK_THROWS_AS(PaddingConfig::parse("padding=1_2"), CompileError);
  CHECK_THROWS_AS(SliceConfig::parse("slice={[0]}"), CompileError);
  CHECK_THROWS_WITH(Comparison::parse("direction=XX, type=FLOAT"), Contains("direction XX"));
  CHECK_THROWS_AS(SortConfig::parse("dimensions={0,1}"), CompileError);
}

TEST_CASE("of() reads what lowering writes, and set_on writes it back", "[hlo][attributes]") {
  auto p = parsed(kDot);
  const Instruction& d = p["d"];
  auto dn = DotDimensionNumbers::of(d);
  CHECK(dn == DotDimensionNumbers{{0}, {2}, {0}, {1}});
  CHECK(to_params(dn) == d.attrs);

  auto q = parsed(R"(HloModule m
ENTRY %e (x: f32[1,5,5,2], k: f32[3,3,2,4], v: f32[4,6], i: s32[3,1]) -> f32[1,5,5,4] {
  %x = f32[1,5,5,2] parameter(0)
  %k = f32[3,3,2,4] parameter(1)
  %v = f32[4,6] parameter(2)
  %i = s32[3,1] parameter(3)
  %z = f32[] constant(0)
  %g = f32[3,6] gather(%v, %i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,6}
  %rw = f32[2,3] reduce-window(%v, %z), window_dimensions={2,2}, window_strides={2,2}, padding={0,0,0,0}, base_dilations={1,1}, window_dilations={1,1}, reducer=max
  %lt = pred[4,6] compare(%v, %v), direction=LT
  ROOT %c = f32[1,5,5,4] convolution(%x, %k), lhs_spec={0,3,1,2}, rhs_spec={3,2,0,1}, out_spec={0,3,1,2}, window_strides={1,1}, padding={1,1,1,1}, lhs_dilation={1,1}, rhs_dilation={1,1}, feature_group_count=1, batch_group_count=1
}
)");
  auto conv = ConvConfig::of(q["c"]);
  CHECK(conv.str() == "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f");
  CHECK(to_params(conv) == q["c"].attrs);
  auto g = GatherDimensionNumbers::of(q["g"]);
  CHECK(g.str() ==
        "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,6}");
  auto w = Window::of(q["rw"]);
  CHECK(w.str() == "window={size=2x2 stride=2x2}");
  CHECK(reducer_of(q["rw"]) == Reducer::kMax);
  // compare_type absent: taken from the operands, as XLA does.
  CHECK(Comparison::of(q["lt"]) == Comparison{ComparisonDirection::kLt, ComparisonType::kFloat});
  CHECK(Comparison::of(q["lt"]).holds(-1, false));
  CHECK(!Comparison::of(q["lt"]).holds(-1, true));
}

TEST_CASE("of() names the instruction when an attribute is missing or malformed", "[hlo][attributes]") {
  auto with = [](std::string attrs) {
    std::string text = kDot;
    size_t at = text.find("lhs_batch_dimensions");
    text.replace(at, text.find('\n', at) - at, attrs);
    return text;
  };
  auto fails = [&](std::string attrs, std::string message) {
    auto p = parsed(with(attrs));
    INFO(attrs);
    CHECK_THROWS_AS(DotDimensionNumbers::of(p["d"]), CompileError);
    CHECK_THROWS_WITH(DotDimensionNumbers::of(p["d"]), Contains("[dot] %d") && Contains(message));
    CHECK_THROWS_WITH(verify(*p.m), Contains("%d") && Contains(message));  // the verifier reads through of()
  };
  fails("lhs_contracting_dimensions={2}", "rhs_contracting_dimensions is missing");
  fails("lhs_contracting_dimensions=2, rhs_contracting_dimensions={1}", "is not a list");
  fails("lhs_contracting_dimensions={3}, rhs_contracting_dimensions={1}",
        "names axis 3, expected axes of the rank-3 lhs");
  fails("lhs_contracting_dimensions={2,2}, rhs_contracting_dimensions={1,1}", "names axis 2 twice");
  fails("lhs_contracting_dimensions={2}, rhs_contracting_dimensions={1,2}",
        "expected 1 (one per lhs contracting axis)");
  fails(
      "lhs_batch_dimensions={0}, lhs_contracting_dimensions={0}, rhs_batch_dimensions={0}, "
      "rhs_contracting_dimensions={1}",
      "axis 0 is in both lhs_batch_dimensions and lhs_contracting_dimensions");
  // Without batch lists a dot has none.
  CHECK(DotDimensionNumbers::of(parsed(with("lhs_contracting_dimensions={2}, rhs_contracting_dimensions={1}"))["d"])
            .lhs_batch_dims.empty());

  auto op = [](std::string line) {
    return parsed(
        "HloModule m\nENTRY %e (v: f32[4,6], i: s32[3,1]) -> f32[4,6] {\n  %v = f32[4,6] parameter(0)\n"
        "  %i = s32[3,1] parameter(1)\n  %z = f32[] constant(0)\n  " +
        line + "\n  ROOT %r = f32[4,6] copy(%v)\n}\n");
  };
  auto p = op("%t = f32[6,4] transpose(%v), permutation={1,1}");
  CHECK_THROWS_WITH(permutation_of(p["t"]), Contains("[transpose] %t") && Contains("names axis 1 twice"));
  p = op("%c = pred[4,6] compare(%v, %v), direction=LESS");
  CHECK_THROWS_WITH(Comparison::of(p["c"]), Contains("direction=LESS is not one of"));
  p = op("%c = pred[4,6] compare(%v, %v), direction=LT, compare_type=SIGNED");
  CHECK_THROWS_WITH(Comparison::of(p["c"]), Contains("compare_type=SIGNED does not suit f32 operands"));
  p = op("%s = f32[4] reduce(%v, %z), dimensions={1}, reducer=replace");
  CHECK_THROWS_WITH(reducer_of(p["s"]), Contains("reducer=replace is not one reduce takes"));
  p = op("%s = f32[4] reduce(%v, %z), dimensions={1}");
  CHECK_THROWS_WITH(reducer_of(p["s"]), Contains("attribute reducer is missing"));
  p = op("%g = f32[3,6] gather(%v, %i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0,1}, "
         "index_vector_dim=1, slice_sizes={1,6}");
  CHECK_THROWS_WITH(GatherDimensionNumbers::of(p["g"]), Contains("start_index_map={0,1} has 2 entries, expected 1"));
  p = op("%g = f32[3,6] gather(%v, %i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
         "index_vector_dim=3, slice_sizes={1,6}");
  CHECK_THROWS_WITH(GatherDimensionNumbers::of(p["g"]), Contains("index_vector_dim=3 is outside the rank-2 indices"));
  p = op("%s = f32[4,6] scatter(%v, %i, %v), update_window_dims={0,1}, inserted_window_dims={0}, "
         "scatter_dims_to_operand_dims={0}, index_vector_dim=1, reducer=add");
  CHECK_THROWS_WITH(ScatterDimensionNumbers::of(p["s"]),
                    Contains("update_window_dims={0,1} has 2 entries, expected 1"));
  p = op("%w = f32[2,3] reduce-window(%v, %z), window_dimensions={2}, reducer=add");
  CHECK_THROWS_WITH(Window::of(p["w"]), Contains("window_dimensions={2} has 1 entries, expected 2"));
  p = op("%w = f32[2,3] slice(%v), start_indices={0,0}, limit_indices={2,3}, strides={1,0}");
  CHECK_THROWS_WITH(SliceConfig::of(p["w"]), Contains("strides={1,0} has entry 0, expected each >= 1"));
}

TEST_CASE("gather through the shared index math: hand-computed rows, clamped starts, batching", "[hlo][indexing]") {
  // Rows of a [3,4] operand; start 5 is clamped to 2 (the last row a 1-row slice can start at), -1 to 0.
  auto x = ints_literal(DType::int32, {3, 4}, {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23});
  auto idx = ints_literal(DType::int32, {3, 1}, {2, 5, -1});
  GatherDimensionNumbers rows{{1}, {0}, {}, {}, {0}, 1, {1, 4}, false};
  auto ix = WindowIndexing::gather(rows, x.dims, idx.dims, {3, 4});
  CHECK(ix.batch_dims == Ints{3});
  CHECK(ix.window_dims == Ints{4});
  auto cursor = ix.cursor();
  int64_t base = -1;
  int64_t b1 = 1;
  CHECK(ix.locate(&b1, idx.data(), idx.dtype, base, cursor) == 8);  // row 2 (clamped from 5)
  CHECK(base == 4);
  CHECK(run_both(R"(HloModule m
ENTRY %e (x: s32[3,4], i: s32[3,1]) -> (s32[3,4]) {
  %x = s32[3,4] parameter(0)
  %i = s32[3,1] parameter(1)
  %g = s32[3,4] gather(%x, %i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
  ROOT %t = (s32[3,4]) tuple(%g)
}
)",
                 {x, idx}) == Ints{20, 21, 22, 23, 20, 21, 22, 23, 0, 1, 2, 3});

  // 2x2 windows of a [4,5] operand at (row, col) starts held in the columns of the indices (index_vector_dim=0);
  // (3, 4) is clamped to (2, 3).
  auto y =
      ints_literal(DType::int32, {4, 5}, {0, 1, 2, 3, 4, 10, 11, 12, 13, 14, 20, 21, 22, 23, 24, 30, 31, 32, 33, 34});
  auto starts = ints_literal(DType::int64, {2, 2}, {1, 3, 2, 4});  // starts (1, 2) and (3, 4)
  CHECK(run_both(R"(HloModule m
ENTRY %e (y: s32[4,5], i: s64[2,2]) -> (s32[2,2,2]) {
  %y = s32[4,5] parameter(0)
  %i = s64[2,2] parameter(1)
  %g = s32[2,2,2] gather(%y, %i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=0, slice_sizes={2,2}
  ROOT %t = (s32[2,2,2]) tuple(%g)
}
)",
                 {y, starts}) == Ints{12, 13, 22, 23, 23, 24, 33, 34});

  // Batching: result[b] = z[b, idx[b]] (operand axis 0 walks with index axis 0).
  auto z = ints_literal(DType::int32, {2, 3}, {0, 1, 2, 10, 11, 12});
  auto bi = ints_literal(DType::uint32, {2, 1}, {2, 1});
  CHECK(run_both(R"(HloModule m
ENTRY %e (z: s32[2,3], i: u32[2,1]) -> (s32[2]) {
  %z = s32[2,3] parameter(0)
  %i = u32[2,1] parameter(1)
  %g = s32[2] gather(%z, %i), offset_dims={}, collapsed_slice_dims={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, start_index_map={1}, index_vector_dim=1, slice_sizes={1,1}
  ROOT %t = (s32[2]) tuple(%g)
}
)",
                 {z, bi}) == Ints{2, 11});
}

TEST_CASE("scatter through the shared index math: duplicates combine, windows that do not fit are dropped",
          "[hlo][indexing]") {
  auto zeros5 = ints_literal(DType::int32, {5}, {0, 0, 0, 0, 0});
  auto idx = ints_literal(DType::int32, {4, 1}, {1, 3, 1, 7});
  auto upd = ints_literal(DType::int32, {4}, {10, 20, 30, 40});
  CHECK(run_both(R"(HloModule m
ENTRY %e (x: s32[5], i: s32[4,1], u: s32[4]) -> (s32[5]) {
  %x = s32[5] parameter(0)
  %i = s32[4,1] parameter(1)
  %u = s32[4] parameter(2)
  %s = s32[5] scatter(%x, %i, %u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, reducer=add
  ROOT %t = (s32[5]) tuple(%s)
}
)",
                 {zeros5, idx, upd}) == Ints{0, 40, 0, 20, 0});

  // Row windows into a [3,2] operand with replace; a 2-element window at 2 of a [3] operand does not fit.
  auto zeros32 = ints_literal(DType::int32, {3, 2}, {0, 0, 0, 0, 0, 0});
  auto rows = ints_literal(DType::int32, {2, 1}, {0, 2});
  auto rupd = ints_literal(DType::int32, {2, 2}, {1, 2, 3, 4});
  CHECK(run_both(R"(HloModule m
ENTRY %e (x: s32[3,2], i: s32[2,1], u: s32[2,2]) -> (s32[3,2]) {
  %x = s32[3,2] parameter(0)
  %i = s32[2,1] parameter(1)
  %u = s32[2,2] parameter(2)
  %s = s32[3,2] scatter(%x, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, reducer=replace
  ROOT %t = (s32[3,2]) tuple(%s)
}
)",
                 {zeros32, rows, rupd}) == Ints{1, 2, 0, 0, 3, 4});
  auto zeros3 = ints_literal(DType::int32, {3}, {0, 0, 0});
  CHECK(run_both(R"(HloModule m
ENTRY %e (x: s32[3], i: s32[2,1], u: s32[2,2]) -> (s32[3]) {
  %x = s32[3] parameter(0)
  %i = s32[2,1] parameter(1)
  %u = s32[2,2] parameter(2)
  %s = s32[3] scatter(%x, %i, %u), update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, reducer=add
  ROOT %t = (s32[3]) tuple(%s)
}
)",
                 {zeros3, rows, rupd}) == Ints{1, 2, 0});

  ScatterDimensionNumbers dn{{1}, {}, {}, {}, {0}, 1, false, false};
  auto ix = WindowIndexing::scatter(dn, {3}, {2, 1}, {2, 2});
  auto cursor = ix.cursor();
  int64_t base = 0, b = 1;
  CHECK(ix.locate(&b, rows.data(), rows.dtype, base, cursor) == -1);
}

TEST_CASE("sort and top-k order through the shared keys: NaN last, -0 == 0, stable", "[hlo][indexing]") {
  std::vector<float> v{3.f, NAN, -0.f, 1.f, 0.f, -2.f};
  Ints perm(v.size());
  SortScratch s;
  const void* keys[] = {v.data()};
  DType dts[] = {DType::float32};
  sort_line(keys, dts, 0, 1, 6, perm.data(), s);
  CHECK(perm == Ints{5, 2, 4, 3, 0, 1});  // -2, -0 (first), 0, 1, 3, NaN
  Ints top(3);
  top_k_line(v.data(), DType::float32, 0, 6, 3, top.data(), s);
  CHECK(top == Ints{1, 0, 3});  // NaN, 3, 1
  // Two keys: the second breaks ties of the first.
  std::vector<int8_t> k1{1, 0, 1, 0};
  std::vector<uint16_t> k2{5, 9, 2, 9};
  const void* two[] = {k1.data(), k2.data()};
  DType two_dts[] = {DType::int8, DType::uint16};
  Ints p2(4);
  sort_line(two, two_dts, 0, 1, 4, p2.data(), s);
  CHECK(p2 == Ints{1, 3, 2, 0});
  SortLines lines({2, 3, 4}, 1);
  CHECK(lines.count == 8);
  CHECK(lines.n == 3);
  CHECK(lines.stride == 4);
  CHECK(lines.base(5) == 13);  // outer 1, inner 1
}
