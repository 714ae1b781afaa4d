// The public sharding API: meshes, partition specs, named shardings, device_put over several devices, shards.
#include "jitx/sharding.h"

#include "jitx/lax_sharding.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "core/errors.h"
#include "api/sharding_internal.h"
#include "primitives/sharding_constraint.h"
#include "runtime/foreign_memory.h"
#include "runtime/runtime.h"
#include "runtime/sharded.h"

namespace jitx {

namespace {
std::string devices_str(const std::vector<Device>& ds) {
  std::vector<std::string> s;
  for (auto& d : ds) s.push_back(d.str());
  return fmt::format("[{}]", fmt::join(s, ", "));
}
std::string names_str(const std::vector<std::string>& names) {
  std::vector<std::string> q;
  for (auto& n : names) q.push_back("'" + n + "'");
  return fmt::format("({}{})", fmt::join(q, ", "), q.size() == 1 ? "," : "");
}

void check_mesh(const std::vector<Device>& devices, const std::vector<int64_t>& shape,
                const std::vector<std::string>& names) {
  for (const Device& d : devices)
    if (d.get() && runtime::foreign_platform(d.get()->platform))
      detail::throw_error<RuntimeError>("Mesh", "got device {}: meshes of {} devices are not supported yet (arrays "
                                        "there are only copied, computations do not run on them)", d.str(),
                                        d.get()->platform);
  if (shape.size() != names.size())
    detail::throw_error<TypeError>("Mesh",
                                   "requires the ndim of its devices ({}) to equal the number of axis names ({}), but "
                                   "got a device shape {} and axis names {}",
                                   shape.size(), names.size(), detail::shape_str(shape), names_str(names));
  int64_t n = 1;
  for (auto s : shape) {
    if (s < 1) detail::throw_error<ShapeError>("Mesh", "axis sizes must be positive, got {}", detail::shape_str(shape));
    n *= s;
  }
  if (n != static_cast<int64_t>(devices.size()))
    detail::throw_error<ShapeError>("Mesh", "a device shape {} needs {} devices, got {}: {}", detail::shape_str(shape),
                                    n, devices.size(), devices_str(devices));
  for (size_t i = 0; i < devices.size(); ++i) {
    if (!devices[i].get()) detail::throw_error<TypeError>("Mesh", "device {} is null", i);
    for (size_t j = 0; j < i; ++j)
      if (devices[i] == devices[j])
        detail::throw_error<TypeError>("Mesh", "devices must be unique, but {} is listed twice in {}", devices[i].str(),
                                       devices_str(devices));
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) detail::throw_error<TypeError>("Mesh", "axis name {} is empty", i);
    for (size_t j = 0; j < i; ++j)
      if (names[i] == names[j])
        detail::throw_error<TypeError>("Mesh", "axis names must be unique, but '{}' appears twice in {}", names[i],
                                       names_str(names));
  }
}
}  // namespace

Mesh::Mesh(std::vector<Device> devices, std::vector<int64_t> shape, std::vector<std::string> axis_names, Loc loc)
    : devices_(std::move(devices)), shape_(std::move(shape)), axis_names_(std::move(axis_names)) {
  detail::ApiScope s(loc);
  check_mesh(devices_, shape_, axis_names_);
}

Mesh::Mesh(std::vector<Device> devices, std::vector<std::string> axis_names, Loc loc)
    : devices_(std::move(devices)), axis_names_(std::move(axis_names)) {
  detail::ApiScope s(loc);
  shape_ = {static_cast<int64_t>(devices_.size())};
  if (axis_names_.size() != 1)
    detail::throw_error<TypeError>("Mesh",
                                   "requires the ndim of its devices (1: a flat list) to equal the number of axis "
                                   "names, but got {} axis names {}",
                                   axis_names_.size(), names_str(axis_names_));
  check_mesh(devices_, shape_, axis_names_);
}

int64_t Mesh::axis_index(const std::string& name) const {
  for (size_t i = 0; i < axis_names_.size(); ++i)
    if (axis_names_[i] == name) return static_cast<int64_t>(i);
  return -1;
}

int64_t Mesh::axis_size(const std::string& name, Loc loc) const {
  detail::ApiScope s(loc);
  int64_t i = axis_index(name);
  if (i < 0)
    detail::throw_error<TypeError>("Mesh.axis_size", "axis '{}' is not found in mesh: {}", name,
                                   names_str(axis_names_));
  return shape_[static_cast<size_t>(i)];
}

std::string Mesh::str() const {
  std::vector<std::string> parts;
  for (size_t i = 0; i < shape_.size(); ++i) parts.push_back(fmt::format("'{}': {}", axis_names_[i], shape_[i]));
  return fmt::format("Mesh({})", fmt::join(parts, ", "));
}

std::string Mesh::short_str() const {
  std::vector<std::string> parts;
  for (size_t i = 0; i < shape_.size(); ++i) parts.push_back(fmt::format("{}={}", axis_names_[i], shape_[i]));
  return fmt::format("({})", fmt::join(parts, ", "));
}

bool Mesh::operator==(const Mesh& o) const {
  return devices_ == o.devices_ && shape_ == o.shape_ && axis_names_ == o.axis_names_;
}

Mesh make_mesh(std::vector<int64_t> axis_shapes, std::vector<std::string> axis_names, std::vector<Device> devices,
               Loc loc) {
  detail::ApiScope s(loc);
  if (devices.empty()) devices = jitx::devices();
  if (axis_shapes.size() != axis_names.size())
    detail::throw_error<TypeError>("make_mesh", "got {} axis sizes {} but {} axis names {}", axis_shapes.size(),
                                   detail::shape_str(axis_shapes), axis_names.size(), names_str(axis_names));
  int64_t n = 1;
  for (auto a : axis_shapes) {
    if (a < 1)
      detail::throw_error<ShapeError>("make_mesh", "axis sizes must be positive, got {}",
                                      detail::shape_str(axis_shapes));
    n *= a;
  }
  if (n > static_cast<int64_t>(devices.size()))
    detail::throw_error<ShapeError>("make_mesh",
                                    "the mesh shape {} needs {} devices, but only {} are available (set "
                                    "JITX_CPU_DEVICE_COUNT for more CPU devices)",
                                    detail::shape_str(axis_shapes), n, devices.size());
  devices.resize(static_cast<size_t>(n), devices.front());
  return Mesh(std::move(devices), std::move(axis_shapes), std::move(axis_names), loc);
}

std::string PartitionSpec::str() const {
  std::vector<std::string> parts;
  for (auto& e : entries_) {
    if (e.axes.empty())
      parts.push_back("None");
    else if (e.axes.size() == 1)
      parts.push_back("'" + e.axes[0] + "'");
    else
      parts.push_back(names_str(e.axes));
  }
  return fmt::format("P({}{})", fmt::join(parts, ", "), parts.size() == 1 ? "," : "");
}

NamedSharding::NamedSharding(Mesh mesh, PartitionSpec spec, Loc loc) : mesh_(std::move(mesh)), spec_(std::move(spec)) {
  detail::ApiScope s(loc);
  std::set<std::string> seen;
  for (auto& e : spec_.entries())
    for (auto& a : e.axes) {
      if (mesh_.axis_index(a) < 0)
        detail::throw_error<TypeError>("NamedSharding", "resource axis: {} of {} is not found in mesh: {}", a,
                                       spec_.str(), names_str(mesh_.axis_names()));
      if (!seen.insert(a).second)
        detail::throw_error<TypeError>("NamedSharding",
                                       "a single NamedSharding spec specification can map every mesh axis to at most "
                                       "one positional dimension, but {} has duplicate entries for `{}`",
                                       spec_.str(), a);
    }
}

std::string NamedSharding::str() const {
  return fmt::format("NamedSharding(mesh={}, spec={})", mesh_.str(), spec_.str());
}

std::string SingleDeviceSharding::str() const { return fmt::format("SingleDeviceSharding(device={})", device_.str()); }

std::vector<Device> Sharding::device_set() const {
  if (auto* n = named()) return n->mesh().devices();
  return {single()->device()};
}

std::vector<Device> Sharding::addressable_devices() const {
  std::vector<Device> out;
  for (auto& d : device_set())
    if (d.is_addressable()) out.push_back(d);
  return out;
}

bool Sharding::is_fully_addressable() const {
  for (auto& d : device_set())
    if (!d.is_addressable()) return false;
  return true;
}

bool Sharding::is_fully_replicated() const {
  auto* n = named();
  if (!n) return true;
  for (auto& e : n->spec().entries())
    for (auto& a : e.axes)
      if (n->mesh().axis_size(a) > 1) return false;
  return true;
}

Shape Sharding::shard_shape(const Shape& global_shape, Loc loc) const {
  detail::ApiScope s(loc);
  if (auto* n = named(); n && n->spec().size() > global_shape.size())
    detail::throw_error<ShapeError>("shard_shape", "{} is only valid for values of rank at least {}, got shape {}",
                                    str(), n->spec().size(), detail::shape_str(global_shape));
  return detail::tiling_of(*this, static_cast<int64_t>(global_shape.size())).shard_shape(global_shape);
}

std::string Sharding::short_str() const {
  if (auto* n = named()) {
    if (is_fully_replicated()) return "replicated";
    return fmt::format("{} on mesh {}", n->spec().str(), n->mesh().short_str());
  }
  return "device " + single()->device().str();
}

std::string Sharding::str() const { return named() ? named()->str() : single()->str(); }

// --- device_put and shards -------------------------------------------------------------------------------------

namespace detail {
void check_sharding_fits(const Sharding& sharding, const Shape& shape, std::string_view op) {
  const NamedSharding* n = sharding.named();
  if (!n) return;
  const auto& spec = n->spec().entries();
  if (spec.size() > shape.size())
    detail::throw_error<ShapeError>(op,
                                    "{} is only valid for values of rank at least {}, but was applied to a value "
                                    "of rank {} (shape {})",
                                    sharding.str(), spec.size(), shape.size(), detail::shape_str(shape));
  for (size_t d = 0; d < spec.size(); ++d) {
    int64_t t = 1;
    for (auto& a : spec[d].axes) t *= n->mesh().axis_size(a);
    if (shape[d] % t != 0)
      detail::throw_error<ShapeError>(op,
                                      "sharding spec {} implies that array axis {} is partitioned {} times, but "
                                      "does not evenly divide the dimension size {}. Got shape: {} and sharding {}",
                                      n->spec().str(), d, t, shape[d], detail::shape_str(shape), sharding.str());
  }
}
}  // namespace detail

Array device_put(const Array& a, const Sharding& sharding, Loc loc) {
  detail::ApiScope s(loc);
  if (auto* one = sharding.single()) return device_put(a, one->device(), loc);
  if (!a.valid()) detail::throw_error<TypeError>("device_put", "the Array is empty (default-constructed)");
  detail::check_sharding_fits(sharding, a.shape(), "device_put");
  // Waits for the value; a tracer without a concrete primal is a TracerError.
  detail::Literal whole =
      a.is_tracer() ? detail::concrete_buffer(a, "device_put")->literal() : a.impl()->host_literal("device_put");
  auto sh = std::make_shared<const Sharding>(sharding);
  auto tiling = detail::tiling_of(sharding, a.ndim());
  std::vector<std::shared_ptr<runtime::Buffer>> shards;
  for (auto& d : sharding.device_set()) {
    if (!d.is_addressable()) {  // another process's device: that process puts its own shard there
      shards.emplace_back();
      continue;
    }
    auto range = tiling.shard_range(a.shape(), tiling.replicated ? 0 : tiling.position_of(d.id()));
    auto buf = runtime::Buffer::from_literal(detail::slice_literal(whole, range), d.get());
    buf->committed = true;
    shards.push_back(std::move(buf));
  }
  return detail::make_sharded(std::move(sh), std::move(shards), a.aval());
}

Sharding Array::sharding(Loc loc) const {
  detail::ApiScope s(loc);
  if (auto* sa = detail::as_sharded(*this)) return *sa->sharding;
  return SingleDeviceSharding(Device(detail::concrete_buffer(*this, "sharding")->device));
}

std::vector<Shard> Array::addressable_shards(Loc loc) const {
  detail::ApiScope s(loc);
  std::vector<Shard> out;
  if (auto* sa = detail::as_sharded(*this)) {
    // Replicas of one tile count up in device order.
    std::vector<std::vector<std::pair<int64_t, int64_t>>> seen;
    for (size_t i = 0; i < sa->shards.size(); ++i) {
      auto* d = sa->devices[i];
      auto range = sa->tiling.shard_range(shape(), sa->tiling.replicated ? 0 : sa->tiling.position_of(d->id));
      int64_t replica = 0;
      for (auto& r : seen) replica += r == range;
      seen.push_back(range);
      if (!sa->shards[i]) continue;  // on another process's device
      out.push_back(Shard{Device(d), range, replica, detail::make_concrete(sa->shards[i], weak_type())});
    }
    return out;
  }
  const auto& buf = detail::concrete_buffer(*this, "addressable_shards");
  std::vector<std::pair<int64_t, int64_t>> full;
  for (auto n : shape()) full.emplace_back(0, n);
  out.push_back(Shard{Device(buf->device), full, 0, *this});
  return out;
}

bool Array::is_fully_replicated(Loc loc) const { return sharding(loc).is_fully_replicated(); }
bool Array::is_fully_addressable(Loc loc) const { return sharding(loc).is_fully_addressable(); }

namespace lax {
Array with_sharding_constraint(const Array& x, const Sharding& sharding, Loc loc) {
  detail::ApiScope s(loc);
  if (!x.valid())
    detail::throw_error<TypeError>("with_sharding_constraint", "the Array is empty (default-constructed)");
  if (!x.is_tracer()) return device_put(x, sharding, loc);
  return detail::bind_sharding_constraint(x, sharding);
}
}  // namespace lax

namespace debug {

std::string array_sharding_table(const Array& a, Loc loc) {
  detail::ApiScope s(loc);
  if (a.ndim() > 2)
    detail::throw_error<ShapeError>("visualize_array_sharding",
                                    "only 0-, 1- and 2-d arrays can be visualized, got "
                                    "shape {}",
                                    detail::shape_str(a.shape()));
  auto shards = a.addressable_shards(loc);
  // The distinct row and column ranges, in order, and the devices of each cell.
  std::vector<std::pair<int64_t, int64_t>> rows, cols;
  auto add = [](auto& v, std::pair<int64_t, int64_t> r) {
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i] == r) return i;
    v.push_back(r);
    return v.size() - 1;
  };
  for (auto& sh : shards) {
    if (a.ndim() == 2)
      add(rows, sh.index[0]);
    else
      add(rows, {0, 1});
    if (a.ndim() >= 1)
      add(cols, sh.index[static_cast<size_t>(a.ndim() - 1)]);
    else
      add(cols, {0, 1});
  }
  std::sort(rows.begin(), rows.end());
  std::sort(cols.begin(), cols.end());
  std::map<std::pair<size_t, size_t>, std::string> label;
  size_t width = 0;
  for (auto& sh : shards) {
    size_t r = 0, c = 0;
    if (a.ndim() == 2) r = static_cast<size_t>(std::find(rows.begin(), rows.end(), sh.index[0]) - rows.begin());
    if (a.ndim() >= 1) {
      auto want = sh.index[static_cast<size_t>(a.ndim() - 1)];
      c = static_cast<size_t>(std::find(cols.begin(), cols.end(), want) - cols.begin());
    }
    auto& l = label[{r, c}];
    std::string platform = sh.device.platform();
    for (auto& ch : platform) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    l = l.empty() ? platform + " " + std::to_string(sh.device.id()) : l + "," + std::to_string(sh.device.id());
    width = std::max(width, l.size());
  }
  width += 2;
  auto rule = [&](const char* left, const char* mid, const char* right) {
    std::string out = left;
    for (size_t c = 0; c < cols.size(); ++c) {
      for (size_t k = 0; k < width; ++k) out += "─";
      out += c + 1 < cols.size() ? mid : right;
    }
    return out + "\n";
  };
  std::string out = rule("┌", "┬", "┐");
  for (size_t r = 0; r < rows.size(); ++r) {
    out += "│";
    for (size_t c = 0; c < cols.size(); ++c) {
      const std::string& l = label[{r, c}];
      size_t left = (width - l.size()) / 2;
      out += std::string(left, ' ') + l + std::string(width - l.size() - left, ' ') + "│";
    }
    out += "\n";
    out += r + 1 < rows.size() ? rule("├", "┼", "┤") : rule("└", "┴", "┘");
  }
  return out;
}

void visualize_array_sharding(const Array& a, Loc loc) { std::cout << array_sharding_table(a, loc) << std::flush; }

}  // namespace debug

}  // namespace jitx
