// .npy / .npz / safetensors: files numpy wrote (tests/data/io, made by make_io_data.py), round trips of every
// dtype, shape and header kind, and corrupted or truncated files (an IOError naming the file, never a crash).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "jitx/jitx.h"
#include "test_util.h"

using namespace jitx;
namespace fs = std::filesystem;

namespace {
std::string data(const std::string& name) { return std::string(JITX_IO_DATA_DIR) + "/" + name; }

/// A fresh directory for this test run's files.
const fs::path& tmpdir() {
  static fs::path d = [] {
    fs::path p = fs::temp_directory_path() / ("jitx_io_test_" + std::to_string(::getpid()));
    fs::create_directories(p);
    return p;
  }();
  return d;
}
std::string tmp(const std::string& name) { return (tmpdir() / name).string(); }

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
void spit(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}

const std::vector<std::string>& dtype_names() {
  static const std::vector<std::string> v{"bool",   "int8",   "int16",   "int32",   "int64",   "uint8",   "uint16",
                                          "uint32", "uint64", "float16", "float32", "float64", "bfloat16"};
  return v;
}
/// What make_io_data.py stored for each dtype (2x3).
std::vector<double> expected_values(const std::string& n) {
  if (n == "bfloat16") return {-2, -1.5, 0, 0.5, 1, 3.25};
  std::vector<double> v;
  for (int i = 0; i < 6; ++i) v.push_back(n == "bool" ? i % 2 : n[0] == 'u' ? i * 7 + 1 : i - 2);
  return v;
}
void check_numpy_array(const Array& a, const std::string& n) {
  INFO(n);
  auto it = std::find(dtype_names().begin(), dtype_names().end(), n);
  static const DType order[] = {bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32,
                                float64, bfloat16};
  CHECK(a.dtype() == order[it - dtype_names().begin()]);
  CHECK(a.shape() == Shape{2, 3});
  CHECK_FALSE(a.weak_type());
  CHECK(a.astype(float64).to_vector<double>() == expected_values(n));
}

/// Random values of every dtype (NaN and infinities among the floats), for bit-exact round trips.
Array random_array(DType d, Shape shape) {
  int64_t n = 1;
  for (auto s : shape) n *= s;
  std::vector<int64_t> bits(static_cast<size_t>(n));
  std::uniform_int_distribution<int64_t> u(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
  for (auto& b : bits) b = u(testing::rng());
  if (is_floating(d)) {
    std::vector<double> v = testing::uniform(static_cast<size_t>(n), -100, 100);
    if (n > 2) v[0] = std::nan(""), v[1] = -INFINITY;
    return testing::make(v, shape, d);
  }
  if (d == DType::bool_) {
    for (auto& b : bits) b &= 1;
  }
  return testing::make_int(bits, shape, d);
}
}  // namespace

TEST_CASE("io: numpy-written .npy files of every dtype load with their values", "[io]") {
  for (auto& n : dtype_names()) check_numpy_array(load(data(n + ".npy")), n);
}

TEST_CASE("io: numpy-written .npz archives (stored and deflated) load by name, in order", "[io]") {
  for (const char* f : {"all.npz", "all_compressed.npz"}) {
    INFO(f);
    NamedArrays items = load_npz_items(data(f));
    REQUIRE(items.size() == dtype_names().size());
    for (size_t i = 0; i < items.size(); ++i) {
      CHECK(items[i].first == dtype_names()[i]);  // numpy wrote them in the script's order
      check_numpy_array(items[i].second, items[i].first);
    }
    auto m = load_npz(data(f));
    CHECK(m.size() == 13);
    check_numpy_array(m.at("float16"), "float16");
  }
}

TEST_CASE("io: Fortran order, big-endian, 0-d, zero-size and version 2/3 headers", "[io]") {
  Array f = load(data("fortran_f64.npy"));  // np.asfortranarray(arange(12).reshape(3,2,2) * 0.5)
  CHECK(f.shape() == Shape{3, 2, 2});
  std::vector<double> want;
  for (int i = 0; i < 12; ++i) want.push_back(i * 0.5);
  CHECK(f.to_vector<double>() == want);  // logical (C-order) values
  CHECK(load(data("big_endian_i4.npy")).to_vector<int32_t>() == std::vector<int32_t>{-2000, -1000, 0, 1000, 2000});
  Array s = load(data("scalar_f32.npy"));
  CHECK(s.ndim() == 0);
  CHECK(s.item<float>() == 3.5f);
  Array e = load(data("empty_0x3_f32.npy"));
  CHECK(e.shape() == Shape{0, 3});
  CHECK(e.dtype() == float32);
  CHECK(load(data("v2_i16.npy")).to_vector<int16_t>() == std::vector<int16_t>{0, 1, 2, 3});
  CHECK(load(data("v3_u8.npy")).to_vector<uint8_t>() == std::vector<uint8_t>{250, 251, 252});
}

TEST_CASE("io: .npy bytes match what numpy writes", "[io]") {
  // Same header text, padding and data as numpy's np.save for each dtype (except the file name, identical bytes).
  for (auto& n : dtype_names()) {
    INFO(n);
    Array a = load(data(n + ".npy"));
    CHECK(npy_bytes(a) == slurp(data(n + ".npy")));
  }
  CHECK(npy_bytes(load(data("scalar_f32.npy"))) == slurp(data("scalar_f32.npy")));
  CHECK(npy_bytes(load(data("empty_0x3_f32.npy"))) == slurp(data("empty_0x3_f32.npy")));
}

TEST_CASE("io: every dtype and shape round-trips bit-exactly through .npy, .npz and safetensors", "[io]") {
  std::vector<Shape> shapes{{}, {0}, {5}, {3, 4}, {2, 0, 3}, {2, 3, 4}};
  NamedArrays all;
  for (int k = 0; k < kNumDTypes; ++k) {
    DType d = static_cast<DType>(k);
    for (size_t si = 0; si < shapes.size(); ++si) {
      Array a = random_array(d, shapes[si]);
      INFO(a.aval().str());
      std::string p = tmp("rt.npy");
      save(p, a);
      Array b = load(p);
      CHECK(b.aval() == a.aval());
      CHECK(npy_bytes(b) == npy_bytes(a));  // the same header and the same bytes: NaN payloads included
      all.emplace_back(fmt::format("{}_{}", dtype_name(d), si), a);
    }
  }
  for (bool compressed : {false, true}) {
    std::string p = tmp(compressed ? "rt_c.npz" : "rt.npz");
    if (compressed) savez_compressed(p, all);
    else savez(p, all);
    NamedArrays back = load_npz_items(p);
    REQUIRE(back.size() == all.size());
    for (size_t i = 0; i < all.size(); ++i) {
      CHECK(back[i].first == all[i].first);
      CHECK(npy_bytes(back[i].second) == npy_bytes(all[i].second));
    }
  }
  std::string st = tmp("rt.safetensors");
  save_safetensors(st, all, {{"epoch", "3"}});
  auto back = load_safetensors(st);
  REQUIRE(back.size() == all.size());
  for (auto& [name, a] : all) CHECK(npy_bytes(back.at(name)) == npy_bytes(a));
  CHECK(load_safetensors_metadata(st) == std::map<std::string, std::string>{{"epoch", "3"}});
}

TEST_CASE("io: computed arrays (eager transposes, jit outputs) save their logical values", "[io]") {
  Array x = testing::make({1, 2, 3, 4, 5, 6}, {2, 3}, float32);
  save(tmp("t.npy"), x.T());
  CHECK(load(tmp("t.npy")).to_vector<float>() == std::vector<float>{1, 4, 2, 5, 3, 6});
  auto f = jit([](const Array& a) { return jnp::transpose(a * 2.0f) + 1.0f; });
  save(tmp("j.npy"), f(x));
  Array y = load(tmp("j.npy"));
  CHECK(y.shape() == Shape{3, 2});
  CHECK(y.to_vector<float>() == std::vector<float>{3, 9, 5, 11, 7, 13});
  CHECK(f(y.T()).to_vector<float>() == std::vector<float>{7, 19, 11, 23, 15, 27});  // loaded arrays compute
}

TEST_CASE("io: numpy's safetensors file (written from the format's description) loads", "[io]") {
  auto m = load_safetensors(data("small.safetensors"));
  REQUIRE(m.size() == 4);
  CHECK(m.at("w").to_vector<float>() == std::vector<float>{1.5f, -2, 0.25f, 8});
  CHECK(m.at("w").shape() == Shape{2, 2});
  CHECK(m.at("step").ndim() == 0);
  CHECK(m.at("step").item<int64_t>() == 7);
  CHECK(m.at("b").dtype() == bfloat16);
  CHECK(m.at("b").astype(float64).to_vector<double>() == expected_values("bfloat16"));
  CHECK(m.at("mask").to_vector<bool>() == std::vector<bool>{true, false, true});
  auto meta = load_safetensors_metadata(data("small.safetensors"));
  CHECK(meta.at("format") == "pt");
}

namespace {
template <class F>
std::string io_error_of(F f) {
  try {
    f();
  } catch (const IOError& e) {
    return e.what();
  }
  return "<no IOError>";
}
}  // namespace

TEST_CASE("io: bad files give an IOError naming the file and the problem", "[io]") {
  using Catch::Matchers::Contains;
  std::string npy = slurp(data("float32.npy"));
  std::string p = tmp("bad.npy");
  spit(p, npy.substr(0, npy.size() - 5));
  CHECK_THAT(io_error_of([&] { load(p); }), Contains("bad.npy") && Contains("truncated") && Contains("24 bytes"));
  spit(p, "hello world, not numpy");
  CHECK_THAT(io_error_of([&] { load(p); }), Contains("not a .npy file"));
  spit(p, npy.substr(0, 30));
  CHECK_THAT(io_error_of([&] { load(p); }), Contains("truncated"));
  std::string c8 = npy;
  c8.replace(c8.find("<f4"), 3, "<c8");
  spit(p, c8);
  CHECK_THAT(io_error_of([&] { load(p); }), Contains("'<c8' has no jitx dtype"));
  std::string bad = npy;
  bad.replace(bad.find("'shape'"), 7, "'shope'");
  spit(p, bad);
  CHECK_THAT(io_error_of([&] { load(p); }), Contains("unexpected key 'shope'"));
  CHECK_THAT(io_error_of([&] { load(tmp("missing.npy")); }), Contains("missing.npy") && Contains("cannot open"));
  CHECK_THAT(io_error_of([&] { load_npz(tmp("missing.npz")); }), Contains("missing.npz"));

  std::string npz = slurp(data("all.npz"));
  std::string z = tmp("bad.npz");
  spit(z, npz.substr(0, npz.size() / 2));
  CHECK_THAT(io_error_of([&] { load_npz(z); }), Contains("bad.npz") && Contains("not a valid .npz"));
  std::string flipped = npz;
  flipped[npz.find("<f4") + 200] ^= 0x5a;  // inside a member's data: its CRC no longer matches
  spit(z, flipped);
  CHECK_THAT(io_error_of([&] { load_npz(z); }), Contains("bad.npz") && Contains(".npy' is corrupted: CRC error"));

  std::string st = slurp(data("small.safetensors"));
  std::string s = tmp("bad.safetensors");
  spit(s, st.substr(0, st.size() - 3));
  CHECK_THAT(io_error_of([&] { load_safetensors(s); }), Contains("bad.safetensors") && Contains("truncated"));
  std::string sj = st;
  sj[8] = '#';  // the header's opening brace
  spit(s, sj);
  CHECK_THAT(io_error_of([&] { load_safetensors(s); }), Contains("JSON header does not parse"));
  spit(s, std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8));
  CHECK_THAT(io_error_of([&] { load_safetensors(s); }), Contains("implausible"));
  // A dimension that is not a JSON integer is refused (it was truncated: [1.5] loaded as f32[1]).
  std::string hdr = R"({"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})";
  std::string len(8, '\0');
  for (size_t k = 0; k < 8; ++k) len[k] = static_cast<char>((hdr.size() >> (8 * k)) & 0xff);
  spit(s, len + hdr + std::string(4, '\0'));
  CHECK_THAT(io_error_of([&] { load_safetensors(s); }), Contains("shape entry 1.5") && Contains("not an integer"));
}

TEST_CASE("io: 3000 random corruptions of each format load or throw a jitx::Error, never crash", "[io]") {
  std::mt19937 g(7);
  for (const char* name : {"fortran_f64.npy", "all.npz", "all_compressed.npz", "small.safetensors"}) {
    std::string good = slurp(data(name));
    std::string p = tmp(std::string("fuzz_") + name);
    int errors = 0;
    for (int it = 0; it < 750; ++it) {
      std::string b = good;
      int kind = it % 3;
      if (kind == 0) b.resize(g() % b.size());                      // truncate
      else for (int k = 0, n = 1 + g() % 4; k < n; ++k) b[g() % b.size()] = static_cast<char>(g());  // overwrite
      if (kind == 2) b.insert(g() % b.size(), std::string(1 + g() % 8, static_cast<char>(g())));      // and insert
      spit(p, b);
      try {
        std::string n = name;
        if (n.ends_with(".npy")) load(p);
        else if (n.ends_with(".npz")) load_npz(p);
        else load_safetensors(p);
      } catch (const Error&) {
        ++errors;
      }
    }
    INFO(name);
    CHECK(errors > 200);  // most corruptions are caught (a flipped data byte of a .npy file cannot be)
  }
}

TEST_CASE("io: writes are atomic (a temporary file renamed into place)", "[io]") {
  std::string p = tmp("atomic.npy");
  save(p, testing::make({1, 2}, float32));
  save(p, testing::make({3, 4, 5}, float64));  // replaces the file
  CHECK(load(p).to_vector<double>() == std::vector<double>{3, 4, 5});
  // A failed write leaves neither the target nor a temporary file.
  std::string q = (tmpdir() / "no_such_dir" / "x.npy").string();
  CHECK_THROWS_AS(save(q, Array(1.0f)), IOError);
  // The message names the caller's path and the missing directory, not the temporary file.
  CHECK_THROWS_WITH(save(q, Array(1.0f)), Catch::Contains("no_such_dir") && !Catch::Contains(".tmp."));
  CHECK_THROWS_AS(savez(q, NamedArrays{{"a", Array(1.0f)}}), IOError);
  for (auto& e : fs::directory_iterator(tmpdir())) CHECK(e.path().string().find(".tmp.") == std::string::npos);
  // Names: empty or repeated names are errors before anything is written.
  CHECK_THROWS_AS(savez(tmp("dup.npz"), NamedArrays{{"a", Array(1.0f)}, {"a", Array(2.0f)}}), IOError);
  CHECK_FALSE(fs::exists(tmp("dup.npz")));
  // An empty archive is valid, as np.savez writes it.
  savez(tmp("empty.npz"), NamedArrays{});
  CHECK(load_npz(tmp("empty.npz")).empty());
  // The README's form: a braced list of names and arrays (the vector and map overloads both took it: ambiguous).
  savez(tmp("braced.npz"), {{"w", Array(1.0f)}, {"b", Array(2.0f)}});
  savez_compressed(tmp("braced_z.npz"), {{"w", Array(1.0f)}});
  auto braced = load_npz(tmp("braced.npz"));
  CHECK(braced.at("b").item<float>() == 2.0f);
  CHECK(load_npz(tmp("braced_z.npz")).at("w").item<float>() == 1.0f);
}

TEST_CASE("io: saving a tracer is a TypeError that says to save outside the transformation", "[io]") {
  auto f = jit([](const Array& x) {
    save(tmp("never.npy"), x);
    return x;
  });
  CHECK_THROWS_WITH(f(Array(1.0f)), Catch::Contains("traced value") && Catch::Contains("[save]"));
  CHECK_THROWS_AS(save(tmp("never.npy"), Array()), TypeError);
}

TEST_CASE("io: saving writes through links and devices as NumPy's open(path, 'wb'), keeping permissions", "[io]") {
  Array x = testing::make({1, 2, 3}, float32);
  // A symbolic link: its target gets the data and the link stays a link.
  spit(tmp("target.npy"), "old");
  fs::remove(tmp("link.npy"));
  fs::create_symlink(tmp("target.npy"), tmp("link.npy"));
  save(tmp("link.npy"), x);
  CHECK(fs::is_symlink(fs::symlink_status(tmp("link.npy"))));
  CHECK(load(tmp("target.npy")).to_vector<float>() == std::vector<float>{1, 2, 3});
  // A dangling link: its target is created.
  fs::remove(tmp("nowhere.npy"));
  fs::remove(tmp("dangling.npy"));
  fs::create_symlink("nowhere.npy", tmp("dangling.npy"));
  save(tmp("dangling.npy"), x);
  CHECK(fs::is_symlink(fs::symlink_status(tmp("dangling.npy"))));
  CHECK(load(tmp("nowhere.npy")).to_vector<float>() == std::vector<float>{1, 2, 3});
  // Hard links keep sharing the file.
  spit(tmp("a.npy"), "old");
  fs::remove(tmp("b.npy"));
  fs::create_hard_link(tmp("a.npy"), tmp("b.npy"));
  save(tmp("a.npy"), x);
  CHECK(fs::hard_link_count(tmp("a.npy")) == 2);
  CHECK(load(tmp("b.npy")).to_vector<float>() == std::vector<float>{1, 2, 3});
  // A replaced file keeps its permission bits (a private file stays private).
  spit(tmp("private.npy"), "old");
  fs::permissions(tmp("private.npy"), fs::perms::owner_read | fs::perms::owner_write);
  save(tmp("private.npy"), x);
  CHECK((fs::status(tmp("private.npy")).permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write));
  savez(tmp("private.npy"), NamedArrays{{"x", x}});
  CHECK((fs::status(tmp("private.npy")).permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write));
  // A character device stays one (a /dev/null twin, where creating it is permitted).
  std::string dev = tmp("null_twin");
  fs::remove(dev);
  if (std::system(("mknod " + dev + " c 1 3 2>/dev/null").c_str()) == 0) {
    save(dev, x);
    savez_compressed(dev, NamedArrays{{"x", x}});
    CHECK(fs::is_character_file(dev));
  }
  for (auto& e : fs::directory_iterator(tmpdir())) CHECK(e.path().string().find(".tmp.") == std::string::npos);
}

TEST_CASE("io: .npy headers without a byte order or with one-character codes load, as NumPy reads them", "[io]") {
  std::string b = npy_bytes(testing::make({1.5, -2.5}, float32));
  auto with_descr = [&](const std::string& descr) {
    std::string s = b;
    auto at = s.find("'<f4'");
    REQUIRE(at != std::string::npos);
    // Same header length: the descr padded inside its quotes would change it, so pad after the dict instead.
    std::string quoted = "'" + descr + "'";
    s.replace(at, 5, quoted);
    s.insert(s.find('}') + 1, std::string(5 - quoted.size(), ' '));
    return from_npy_bytes(s);
  };
  CHECK(with_descr("f4").to_vector<float>() == std::vector<float>{1.5f, -2.5f});
  CHECK(with_descr("f").to_vector<float>() == std::vector<float>{1.5f, -2.5f});
  CHECK(with_descr("f").dtype() == DType::float32);
  CHECK(with_descr("i").dtype() == DType::int32);
  CHECK(with_descr("?").dtype() == DType::bool_);
  CHECK_THROWS_AS(with_descr("x"), IOError);
  // Shapes as Python reads them: "(2,)" and "(2, )" are tuples, "(2)" is the int 2, which NumPy refuses.
  auto with_shape = [&](const std::string& shape) {
    std::string s = b;
    auto at = s.find("(2,)");
    REQUIRE(at != std::string::npos);
    s.replace(at, 4, shape);
    s.insert(s.find('}') + 1, std::string(4 - shape.size(), ' '));
    return from_npy_bytes(s);
  };
  CHECK(with_shape("(2,)").to_vector<float>() == std::vector<float>{1.5f, -2.5f});
  CHECK_THROWS_WITH(with_shape("(2)"), Catch::Contains("trailing comma"));
  CHECK_THROWS_AS(with_shape("(2)"), IOError);
}

TEST_CASE("io: without x64, 64-bit files load as 32-bit arrays (as jnp.asarray(np.load(...)))", "[io]") {
  std::string p = tmp("wide.npy");
  save(p, testing::make({1.25, -3.5}, float64));
  bool was = config().enable_x64;
  config().enable_x64 = false;
  Array a = load(p);
  config().enable_x64 = was;
  CHECK(a.dtype() == DType::float32);
  CHECK(a.to_vector<float>() == std::vector<float>{1.25f, -3.5f});
  CHECK(load(p).dtype() == DType::float64);
}
