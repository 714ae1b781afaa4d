// Saving and loading arrays: NumPy's .npy and .npz, safetensors, and whole pytrees of parameters (checkpoints).
//   jitx::save("w.npy", w);              Array w2 = jitx::load("w.npy");
//   jitx::savez("p.npz", {{"w", w}, {"b", b}});    auto p = jitx::load_npz("p.npz");   // p.at("w")
//   jitx::save("ckpt.npz", params);      Params q = jitx::load("ckpt.npz", params);    // any pytree
// Every dtype jitx has round-trips. bfloat16 is written as NumPy writes an ml_dtypes.bfloat16 array ('<V2', since
// NumPy has no bfloat16), and a '<V2' array is read back as bfloat16. Writes go to a temporary file in the same
// directory, renamed over `path` once complete, so a crash never leaves a half-written file under the real name.
// Unreadable, corrupted or truncated files throw IOError naming the file and what is wrong.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "jitx/array.h"
#include "jitx/error.h"
#include "jitx/pytree.h"

namespace jitx {

/// A file that cannot be read or written, or whose contents are not a valid file of its format.
class IOError : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

/// Named arrays in order (the order an archive stores them in).
using NamedArrays = std::vector<std::pair<std::string, Array>>;

// --- .npy -----------------------------------------------------------------------------------------------------
/// Writes one array as a .npy file (format version 1.0, or 2.0 when the header needs it; C order).
void save(const std::string& path, const Array& a, Loc loc = Loc::current());
/// Reads a .npy file (versions 1.0, 2.0, 3.0; C or Fortran order; little- or big-endian) into an Array.
Array load(const std::string& path, Loc loc = Loc::current());

/// The bytes of a .npy file holding `a` (what save writes), and an Array from such bytes (`what` names the source in
/// errors).
std::string npy_bytes(const Array& a, Loc loc = Loc::current());
Array from_npy_bytes(const std::string& bytes, const std::string& what = "<bytes>", Loc loc = Loc::current());

// --- .npz -----------------------------------------------------------------------------------------------------
/// A zip archive of .npy files named `<name>.npy`, as numpy.savez (stored) and numpy.savez_compressed (deflated).
void savez(const std::string& path, const NamedArrays& arrays, Loc loc = Loc::current());
void savez(const std::string& path, const std::map<std::string, Array>& arrays, Loc loc = Loc::current());
void savez_compressed(const std::string& path, const NamedArrays& arrays, Loc loc = Loc::current());
void savez_compressed(const std::string& path, const std::map<std::string, Array>& arrays, Loc loc = Loc::current());
/// savez(path, {{"w", w}, {"b", b}}): a braced list of named arrays (in its order; the vector and map overloads
/// would both take it).
inline void savez(const std::string& path, std::initializer_list<std::pair<std::string, Array>> arrays,
                  Loc loc = Loc::current()) {
  savez(path, NamedArrays(arrays), loc);
}
inline void savez_compressed(const std::string& path, std::initializer_list<std::pair<std::string, Array>> arrays,
                             Loc loc = Loc::current()) {
  savez_compressed(path, NamedArrays(arrays), loc);
}
/// Every array of an .npz file, by name (without the `.npy` suffix), in the archive's order.
NamedArrays load_npz_items(const std::string& path, Loc loc = Loc::current());
/// Every array of an .npz file, by name (without the `.npy` suffix).
std::map<std::string, Array> load_npz(const std::string& path, Loc loc = Loc::current());

// --- safetensors ----------------------------------------------------------------------------------------------
/// A safetensors file (8-byte little-endian header length, JSON header, then the tensors' bytes). `metadata` goes
/// in the header's "__metadata__" (string to string, as the format requires).
void save_safetensors(const std::string& path, const NamedArrays& arrays,
                      const std::map<std::string, std::string>& metadata = {}, Loc loc = Loc::current());
void save_safetensors(const std::string& path, const std::map<std::string, Array>& arrays,
                      const std::map<std::string, std::string>& metadata = {}, Loc loc = Loc::current());
std::map<std::string, Array> load_safetensors(const std::string& path, Loc loc = Loc::current());
/// The header's "__metadata__" (empty when it has none).
std::map<std::string, std::string> load_safetensors_metadata(const std::string& path, Loc loc = Loc::current());

// --- pytrees (checkpoints) ------------------------------------------------------------------------------------
namespace detail {
/// The leaves of a pytree with their key paths (as names: "['w']", ".layers[0].b"); numbers in structs are static
/// and not saved. A tree whose only leaf is the root is named "arr_0".
template <class T>
NamedArrays named_leaves(const T& tree) {
  Flattener f;
  f.trace_scalars = false;
  PyTree<T>::flatten(tree, f, "");
  NamedArrays out;
  for (size_t i = 0; i < f.leaves.size(); ++i) out.emplace_back(f.paths[i].empty() ? "arr_0" : f.paths[i], f.leaves[i]);
  return out;
}
/// Picks each of `like`'s leaves from `file` by name, checking shape and dtype (IOError naming the path).
std::vector<Array> match_leaves(const std::string& path, const NamedArrays& like, std::map<std::string, Array> file,
                                Loc loc);
}  // namespace detail

template <class T>
concept SavableTree = !std::is_convertible_v<T, Array> && !std::is_same_v<T, NamedArrays>;

/// Saves every Array leaf of a pytree in an .npz file, named by its key path (numpy.load reads it back as a dict).
template <SavableTree T>
void save(const std::string& path, const T& tree, Loc loc = Loc::current()) {
  savez(path, detail::named_leaves(tree), loc);
}
/// Loads a pytree saved by save(path, tree): `like` gives the structure (and the static values); each leaf must be
/// in the file with like's shape and dtype, and the file must hold no other arrays.
template <SavableTree T>
T load(const std::string& path, const T& like, Loc loc = Loc::current()) {
  std::vector<Array> leaves = detail::match_leaves(path, detail::named_leaves(like), load_npz(path, loc), loc);
  T out = like;
  detail::Rebuilder r{&leaves};
  PyTree<T>::replace(out, r);
  return out;
}

}  // namespace jitx
