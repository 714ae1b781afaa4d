// HloSharding: normalisation, tile geometry, printing and parsing.
#include "hlo/ir/sharding.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>

#include "core/errors.h"

namespace jitx::hlo {

HloSharding HloSharding::tiled(std::vector<int64_t> tile_dims, std::vector<int64_t> devices,
                               bool last_tile_replicate) {
  HloSharding s;
  int64_t n = 1;
  for (auto t : tile_dims) n *= t;
  JITX_ASSERT(n == static_cast<int64_t>(devices.size()), "tile_dims {} cover {} devices, got {}",
              fmt::join(tile_dims, ","), n, devices.size());
  if (last_tile_replicate && !tile_dims.empty() && tile_dims.back() == 1) {
    tile_dims.pop_back();
    last_tile_replicate = false;
  }
  int64_t tiles = n / (last_tile_replicate ? tile_dims.back() : 1);
  if (tiles == 1) return s;  // every device holds the whole array
  s.replicated = false;
  s.tile_dims = std::move(tile_dims);
  s.devices = std::move(devices);
  s.last_tile_replicate = last_tile_replicate;
  return s;
}

std::string HloSharding::to_string() const {
  if (replicated) return "{replicated}";
  return fmt::format("{{devices=[{}]{}{}}}", fmt::join(tile_dims, ","), fmt::join(devices, ","),
                     last_tile_replicate ? " last_tile_dim_replicate" : "");
}

namespace {
[[noreturn]] void bad(std::string_view text, std::string_view what) {
  detail::throw_error<Error>("hlo sharding", "cannot parse '{}': {}", text, what);
}
}  // namespace

HloSharding HloSharding::parse(std::string_view text) {
  std::string_view t = text;
  auto trim = [](std::string_view v) {
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.remove_prefix(1);
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.remove_suffix(1);
    return v;
  };
  t = trim(t);
  if (t.size() < 2 || t.front() != '{' || t.back() != '}') bad(text, "expected '{...}'");
  t = trim(t.substr(1, t.size() - 2));
  if (t == "replicated") return replicate();
  if (t.rfind("devices=[", 0) != 0) bad(text, "expected 'replicated' or 'devices=[...]'");
  t.remove_prefix(9);
  size_t close = t.find(']');
  if (close == std::string_view::npos) bad(text, "missing ']'");
  auto ints = [&](std::string_view v) {
    std::vector<int64_t> out;
    size_t i = 0;
    while (i < v.size()) {
      size_t j = i;
      while (j < v.size() && std::isdigit(static_cast<unsigned char>(v[j]))) ++j;
      if (j == i) bad(text, "expected a number");
      if (j - i > 9) bad(text, "a number too large for a tile count or a device id");
      out.push_back(std::stoll(std::string(v.substr(i, j - i))));
      i = j;
      if (i < v.size()) {
        if (v[i] != ',') bad(text, "expected ','");
        ++i;
        if (i == v.size()) bad(text, "a trailing ','");
      }
    }
    return out;
  };
  std::vector<int64_t> dims = ints(t.substr(0, close));
  std::string_view rest = trim(t.substr(close + 1));
  bool last = false;
  constexpr std::string_view kLast = "last_tile_dim_replicate";
  if (rest.size() >= kLast.size() && rest.substr(rest.size() - kLast.size()) == kLast) {
    last = true;
    rest = trim(rest.substr(0, rest.size() - kLast.size()));
  }
  std::vector<int64_t> devs = ints(rest);
  if (dims.empty()) bad(text, "no tile dimensions");
  int64_t n = 1;
  for (auto d : dims) {
    if (d < 1) bad(text, "a tile dimension below 1");
    if (n > (int64_t{1} << 40) / d) bad(text, "too many tiles");
    n *= d;
  }
  if (n != static_cast<int64_t>(devs.size()))
    bad(text, fmt::format("the tile dimensions cover {} devices but {} are listed", n, devs.size()));
  for (size_t i = 0; i < devs.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (devs[i] == devs[j]) bad(text, fmt::format("device {} is listed twice", devs[i]));
  return tiled(std::move(dims), std::move(devs), last);
}

std::vector<int64_t> HloSharding::tile_index(int64_t pos) const {
  std::vector<int64_t> idx(static_cast<size_t>(std::max<int64_t>(rank(), 0)), 0);
  if (replicated) return idx;
  int64_t rem = pos;
  for (int64_t d = static_cast<int64_t>(tile_dims.size()) - 1; d >= 0; --d) {
    int64_t t = tile_dims[static_cast<size_t>(d)];
    if (d < rank()) idx[static_cast<size_t>(d)] = rem % t;
    rem /= t;
  }
  return idx;
}

std::vector<int64_t> HloSharding::shard_shape(const std::vector<int64_t>& shape) const {
  std::vector<int64_t> out = shape;
  if (replicated) return out;
  for (size_t d = 0; d < out.size(); ++d) {
    int64_t t = tiles(static_cast<int64_t>(d));
    out[d] = (out[d] + t - 1) / t;
  }
  return out;
}

std::vector<std::pair<int64_t, int64_t>> HloSharding::shard_range(const std::vector<int64_t>& shape,
                                                                  int64_t pos) const {
  std::vector<std::pair<int64_t, int64_t>> r;
  auto per = shard_shape(shape);
  auto idx = tile_index(pos);
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t i = replicated ? 0 : idx[d];
    int64_t lo = std::min(shape[d], i * per[d]), hi = std::min(shape[d], lo + per[d]);
    r.emplace_back(lo, hi);
  }
  return r;
}

int64_t HloSharding::position_of(int64_t device) const {
  for (size_t i = 0; i < devices.size(); ++i)
    if (devices[i] == device) return static_cast<int64_t>(i);
  return -1;
}

}  // namespace jitx::hlo
