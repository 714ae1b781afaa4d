// The third part of the MPI test: the public multi-process API (issue 17) under mpirun. The global device list, a mesh
// spanning processes, arrays that hold only this process's shards (device_put, make_array_from_*), the error when
// such an array is read whole, process_allgather, and jit over the global mesh: a partitioned reduction, a matmul on
// a 2-D mesh split on its contracting dimension, an unsharded argument beside a sharded one, and a jitted shard_map
// with psum. Every value is checked against the same computation on the host, in double precision.
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "jitx/distributed.h"
#include "jitx/jitx.h"
#include "jitx/sharding.h"

using namespace jitx;

namespace {

int64_t g_checks = 0, g_failures = 0;

/// One check of the multi-process run (mpirun, no test framework): counted, printed when it fails; the process
/// exits non-zero when any did (mpi_collectives.cpp's main).
#define CHECK(...) check_that(__VA_ARGS__)

void check_that(bool ok, const std::string& what) {
  ++g_checks;
  if (!ok) {
    ++g_failures;
    std::printf("FAIL process %lld: %s\n", static_cast<long long>(distributed::process_index()), what.c_str());
  }
}

/// Whether optimised HLO text holds an `op` collective, synchronous or made asynchronous ("<op>-start").
bool has_collective(const std::string& text, const std::string& op) {
  return text.find(" " + op + "(") != std::string::npos || text.find(" " + op + "-start(") != std::string::npos;
}

/// A host array of `shape` with value f(flat index), float32.
Array host(const Shape& shape, const std::function<double(int64_t)>& f) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(f(i));
  return array(v.data(), shape);
}

void close(const Array& got, const std::vector<double>& want, double tol, const std::string& what) {
  auto g = got.to_vector<double>();
  bool ok = g.size() == want.size();
  double worst = 0;
  for (size_t i = 0; ok && i < g.size(); ++i)
    worst = std::max(worst, std::abs(g[i] - want[i]) / (1 + std::abs(want[i])));
  CHECK(ok && worst <= tol, fmt::format("{}: {} elements (want {}), worst relative error {:.2e} (tolerance {:.0e})",
                                        what, g.size(), want.size(), worst, tol));
}

template <class F>
void expect_throw(F&& f, const std::string& needle, const std::string& what) {
  try {
    f();
    CHECK(false, what + ": no exception");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find(needle) != std::string::npos,
          fmt::format("{}: message '{}' lacks '{}'", what, e.what(), needle));
  }
}

}  // namespace

int64_t run_api_check(int64_t local_n) {
  const int64_t me = distributed::process_index(), np = distributed::process_count(), n = np * local_n;
  // The global device list.
  auto all = devices();
  auto mine = local_devices();
  CHECK(static_cast<int64_t>(all.size()) == n && device_count() == n, "devices() lists every process's devices");
  CHECK(static_cast<int64_t>(mine.size()) == local_n && local_device_count() == local_n, "local_devices()");
  for (int64_t i = 0; i < n; ++i) {
    const Device& d = all[static_cast<size_t>(i)];
    CHECK(d.id() == i && d.process_index() == i / local_n && d.is_addressable() == (i / local_n == me),
          fmt::format("device {}: id {}, process {}, addressable {}", i, d.id(), d.process_index(),
                      d.is_addressable()));
  }
  expect_throw([&] { device_put(Array(1.0f), all[static_cast<size_t>(((me + 1) % np) * local_n)]); }, "process",
               "device_put to another process's device");

  // An array over a mesh spanning processes: this process holds its rows only.
  Mesh mesh = make_mesh({n}, {"x"});
  NamedSharding rows(mesh, P("x"));
  auto f = [](int64_t i) { return 0.25 * static_cast<double>(i % 37) - 3.0; };
  Shape shape{2 * n, 3};
  Array whole = host(shape, f);
  std::vector<double> want = whole.to_vector<double>();
  Array xs = device_put(whole, rows);
  CHECK(!xs.is_fully_addressable() && xs.sharding().addressable_devices().size() == size_t(local_n),
        "device_put over the global mesh: not fully addressable");
  auto shards = xs.addressable_shards();
  CHECK(static_cast<int64_t>(shards.size()) == local_n, "addressable_shards: one per local device");
  for (auto& sh : shards) {
    int64_t row = sh.device.id() * 2;
    CHECK(sh.index[0] == std::pair<int64_t, int64_t>(row, row + 2) && sh.device.is_addressable(), "shard index");
    std::vector<double> part(want.begin() + row * 3, want.begin() + (row + 2) * 3);
    close(sh.data, part, 0, "shard data");
  }
  expect_throw([&] { xs.to_vector<float>(); }, "non-addressable", "reading a global array whole");
  close(multihost::process_allgather(xs), want, 0, "process_allgather of a global array");
  close(device_put(whole, NamedSharding(mesh, P())), want, 0, "a replicated global array reads whole");

  // make_array_from_*.
  Array cb = make_array_from_callback(shape, rows, [&](const ShardIndex& idx) {
    return lax::slice(whole, {idx[0].first, idx[1].first}, {idx[0].second, idx[1].second});
  });
  close(multihost::process_allgather(cb), want, 0, "make_array_from_callback");
  std::vector<Array> parts;
  for (auto& d : rows.mesh().devices())
    if (d.is_addressable()) parts.push_back(lax::slice(whole, {d.id() * 2, 0}, {d.id() * 2 + 2, 3}));
  close(multihost::process_allgather(make_array_from_single_device_arrays(shape, rows, parts)), want, 0,
        "make_array_from_single_device_arrays");
  Array local_rows = lax::slice(whole, {me * 2 * local_n, 0}, {(me + 1) * 2 * local_n, 3});
  Array pl = make_array_from_process_local_data(rows, local_rows);
  CHECK(pl.shape() == shape, "make_array_from_process_local_data infers the global shape");
  close(multihost::process_allgather(pl), want, 0, "make_array_from_process_local_data");
  expect_throw([&] { make_array_from_process_local_data(rows, whole, shape); }, "local_data has shape",
               "make_array_from_process_local_data with the wrong block");

  // process_allgather of process-local values.
  Array mine_v = host({2}, [&](int64_t i) { return static_cast<double>(10 * me + i); });
  std::vector<double> stacked;
  for (int64_t p = 0; p < np; ++p) stacked.insert(stacked.end(), {10.0 * p, 10.0 * p + 1});
  Array st = multihost::process_allgather(mine_v);
  CHECK(st.shape() == Shape{np, 2}, "process_allgather stacks");
  close(st, stacked, 0, "process_allgather of local values");
  CHECK(multihost::process_allgather(mine_v, true).shape() == Shape{2 * np}, "process_allgather tiled");

  // jit over the global mesh: a reduction over the sharded rows (an all-reduce across processes).
  auto colsum = jit([](const Array& x) { return jnp::sum(x * 2.0f, {0}); });
  std::vector<double> cs(3, 0.0);
  for (int64_t i = 0; i < 2 * n; ++i)
    for (int64_t j = 0; j < 3; ++j) cs[static_cast<size_t>(j)] += 2 * want[static_cast<size_t>(i * 3 + j)];
  close(multihost::process_allgather(colsum(xs)), cs, 1e-6, "jit: column sums of rows sharded over processes");

  // A finite difference over the rows: each device receives the next one's first row (a collective-permute, across
  // processes at their boundaries).
  auto diff = jit([](const Array& a) {
    int64_t rows = a.shape()[0];
    return lax::slice(a, {1, 0}, {rows, 3}) - lax::slice(a, {0, 0}, {rows - 1, 3});
  });
  std::vector<double> dv;
  for (size_t k = 0; k < static_cast<size_t>((2 * n - 1) * 3); ++k) dv.push_back(want[k + 3] - want[k]);
  close(diff(xs), dv, 1e-6, "jit: a finite difference over rows split across processes");
  CHECK(has_collective(diff.lower(xs).compile().as_text(), "collective-permute"), "the halo exchange");

  // A matmul on a 2-D mesh (data x model), split on the contracting dimension: partial products and an all-reduce.
  Mesh m2 = make_mesh({n / 2, 2}, {"data", "model"});
  Array a = host({n, 6}, [](int64_t i) { return std::sin(0.3 * static_cast<double>(i)); });
  Array b = host({6, 5}, [](int64_t i) { return std::cos(0.7 * static_cast<double>(i)); });
  auto av = a.to_vector<double>(), bv = b.to_vector<double>();
  std::vector<double> ab(static_cast<size_t>(n * 5), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < 5; ++j)
      for (int64_t k = 0; k < 6; ++k)
        ab[static_cast<size_t>(i * 5 + j)] += av[static_cast<size_t>(i * 6 + k)] * bv[static_cast<size_t>(k * 5 + j)];
  auto mm = jit([](const Array& x, const Array& y) { return jnp::matmul(x, y); });
  Array as = device_put(a, NamedSharding(m2, P("data", "model"))), bs = device_put(b, NamedSharding(m2, P("model")));
  close(multihost::process_allgather(mm(as, bs)), ab, 1e-5, "jit: matmul split on its contracting dimension");
  std::string text = mm.lower(as, bs).compile().as_text();
  CHECK(has_collective(text, "all-reduce"), "the partitioned matmul has an all-reduce");
  // A contraction over a dimension split across every device, its result wanted split on rows: the partial
  // products meet in a reduce-scatter (MPI_Reduce_scatter between the processes).
  Array pa = host({n, 2 * n}, [](int64_t i) { return std::sin(0.1 * static_cast<double>(i) + 0.3); });
  Array qa = host({2 * n, 3}, [](int64_t i) { return std::cos(0.2 * static_cast<double>(i)); });
  auto pv = pa.to_vector<double>(), qv = qa.to_vector<double>();
  std::vector<double> pq(static_cast<size_t>(n * 3), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 2 * n; ++k)
        pq[static_cast<size_t>(i * 3 + j)] +=
            pv[static_cast<size_t>(i * 2 * n + k)] * qv[static_cast<size_t>(k * 3 + j)];
  JitOptions rs_opts;
  rs_opts.out_shardings = {Sharding(NamedSharding(mesh, P("x")))};
  auto mm_rs = jit([](const Array& p, const Array& q) { return jnp::matmul(p, q); }, rs_opts);
  Array ps = device_put(pa, NamedSharding(mesh, P(nullptr, "x"))), qs = device_put(qa, NamedSharding(mesh, P("x")));
  close(multihost::process_allgather(mm_rs(ps, qs)), pq, 1e-5, "jit: a reduce-scatter across processes");
  CHECK(has_collective(mm_rs.lower(ps, qs).compile().as_text(), "reduce-scatter"),
        "the contraction ends in a reduce-scatter");

  // An unsharded argument (each process's own copy, replicated) beside a sharded one.
  close(multihost::process_allgather(mm(as, b)), ab, 1e-5, "jit: a sharded and an unsharded argument");

  // A jitted shard_map with psum over the processes.
  auto body = [](const Array& blk) { return lax::psum(jnp::sum(blk), "x"); };
  auto sm = jit(shard_map(std::function<Array(const Array&)>(body), mesh, P("x"), P()));
  double total = 0;
  for (double v : want) total += v;
  close(sm(xs), {total}, 1e-6, "jit(shard_map) with psum across processes");

  expect_throw([] { distributed::initialize(); }, "only be called once", "a second distributed::initialize");
  multihost::sync_global_devices("mpi_api done");
  std::printf("mpi_api: process %lld of %lld: %lld checks, %lld failed\n", static_cast<long long>(me),
              static_cast<long long>(np), static_cast<long long>(g_checks), static_cast<long long>(g_failures));
  return g_failures;
}
