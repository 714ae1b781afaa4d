// jitx::random: splittable Threefry-2x32 keys and samplers, bit-for-bit as jax.random, written with
// jitx ops.
//
// Keys are raw uint32[2] arrays (JAX's legacy `PRNGKey` layout of the threefry2x32 implementation).
// Every function is ordinary traced code, so it runs eagerly, under jit, and inside other
// transformations. Bits follow JAX's default `jax_threefry_partitionable=True` (JAX >= 0.5; checked
// against JAX 0.10.2). Default dtypes are those of JAX's default configuration
// (jax_enable_x64=False): float32, uint32, int32.
#pragma once
#include <optional>
#include <string_view>

#include "jitx/array.h"

namespace jitx::random {

/// A key from a 64-bit seed: {seed >> 32, seed & 0xFFFFFFFF} as uint32[2] (JAX's threefry_seed on
/// an int64, i.e. jax.random.PRNGKey under jax_enable_x64; seeds in [0, 2^31) give the same key in
/// either JAX mode).
Array PRNGKey(int64_t seed, Loc loc = Loc::current());
/// A key from an integer scalar array (traced or not): 64-bit seeds split into hi/lo words,
/// narrower ones give {0, uint32(seed)}, as JAX's threefry_seed.
Array PRNGKey(const Array& seed, Loc loc = Loc::current());
/// jax.random.key: the same raw uint32[2] key as PRNGKey (jitx has no typed key arrays).
Array key(int64_t seed, Loc loc = Loc::current());

/// `num` new keys, shape (num, 2).
Array split(const Array& key, int64_t num = 2, Loc loc = Loc::current());
/// A shape of new keys, shape (*shape, 2).
Array split(const Array& key, const Shape& shape, Loc loc = Loc::current());
/// A new key from key and an integer scalar (converted to uint32, wrapping negatives).
Array fold_in(const Array& key, const Array& data, Loc loc = Loc::current());

/// Uniform random bits of an unsigned dtype (uint8, uint16, uint32, uint64), as jax.random.bits.
Array bits(const Array& key, const Shape& shape = {}, DType dtype = DType::uint32,
           Loc loc = Loc::current());

/// jax.random.key_data: the raw uint32 words of keys (..., 2). jitx keys are raw words already (the legacy
/// PRNGKey layout), so this checks them and returns them.
Array key_data(const Array& keys, Loc loc = Loc::current());
/// jax.random.wrap_key_data: raw uint32 words (..., 2) as keys (impl "threefry2x32" only): checked, returned.
Array wrap_key_data(const Array& key_bits, std::string_view impl = "threefry2x32", Loc loc = Loc::current());
/// jax.random.clone: a key to reuse (keys are values in jitx: the key itself).
Array clone(const Array& key, Loc loc = Loc::current());


/// Uniform floats in [minval, maxval); minval/maxval broadcast to shape.
Array uniform(const Array& key, const Shape& shape = {}, DType dtype = DType::float32,
              const Array& minval = 0.0, const Array& maxval = 1.0, Loc loc = Loc::current());
/// Standard normal floats (sqrt(2) * erf_inv of a uniform in (-1, 1)).
Array normal(const Array& key, const Shape& shape = {}, DType dtype = DType::float32,
             Loc loc = Loc::current());
/// Normal floats truncated to the open interval (lower, upper); shape defaults to lower's and
/// upper's broadcast.
Array truncated_normal(const Array& key, const Array& lower, const Array& upper,
                       std::optional<Shape> shape = std::nullopt, DType dtype = DType::float32,
                       Loc loc = Loc::current());
/// Booleans, true with probability p (JAX's mode "low"); p's float dtype is used (float32 for a C++
/// number), shape defaults to p's shape.
Array bernoulli(const Array& key, const Array& p = 0.5, std::optional<Shape> shape = std::nullopt,
                Loc loc = Loc::current());
/// Standard Gumbel floats, -log(-log(u)) (JAX's mode "low").
Array gumbel(const Array& key, const Shape& shape = {}, DType dtype = DType::float32,
             Loc loc = Loc::current());
/// int32 samples of categorical distributions given by unnormalised log-probabilities along axis
/// (Gumbel-max, with replacement). shape defaults to logits' shape without axis; a longer shape
/// adds leading sample axes.
Array categorical(const Array& key, const Array& logits, int64_t axis = -1,
                  std::optional<Shape> shape = std::nullopt, Loc loc = Loc::current());
/// A random permutation of arange(n) (int32).
Array permutation(const Array& key, int64_t n, Loc loc = Loc::current());
/// x shuffled along axis: whole slices move together unless independent, when each 1-D line is
/// shuffled on its own. An integer 0-d concrete x means arange(x).
Array permutation(const Array& key, const Array& x, int64_t axis = 0, bool independent = false,
                  Loc loc = Loc::current());
/// jax.random.choice: n_draws = prod(shape) draws from a (a concrete integer n means arange(n); an array, its slices
/// along axis), with or without replacement, uniformly or with probabilities p (a vector of a.shape[axis] weights,
/// normalised by their sum). The result has shape `shape` for an integer a, else a.shape with axis replaced by
/// shape. Drawn as JAX draws: randint (int32, JAX's default without x64) and take; a permutation's first slices; the
/// inverse CDF (searchsorted of the cumulative p); Gumbel top-k without replacement.
Array choice(const Array& key, const Array& a, const Shape& shape = {}, bool replace = true,
             const std::optional<Array>& p = std::nullopt, int64_t axis = 0, Loc loc = Loc::current());
/// jax.random.multinomial: counts of n trials over the categories of p (its last axis), as a scan of binomials over
/// the categories (each key from split(key, categories)); shape defaults to p's shape, n broadcasts to its batch
/// shape. Counts as floats of dtype (float32 by default, JAX's default without x64).
Array multinomial(const Array& key, const Array& n, const Array& p, std::optional<Shape> shape = std::nullopt,
                  DType dtype = DType::float32, Loc loc = Loc::current());
/// Integers in [minval, maxval) of an integer dtype (modulus-based, as JAX: slightly biased unless
/// the range is a power of two). maxval <= minval gives minval.
Array randint(const Array& key, const Shape& shape, const Array& minval, const Array& maxval,
              DType dtype = DType::int32, Loc loc = Loc::current());

// ---- More samplers, as jax.random (src/api/random_samplers.cpp). JAX's names, argument order and defaults; the
// float dtype defaults to float32 and the integer one to int32 (JAX's default mode). Shapes default, where JAX's
// do, to the parameters' broadcast shape. Which of them are bit-exact with JAX: see the README.

/// Standard exponential, -log1p(-u).
Array exponential(const Array& key, const Shape& shape = {}, DType dtype = DType::float32, Loc loc = Loc::current());
/// Standard Laplace, sign(u) * log1p(-|u|) with u in (-1, 1).
Array laplace(const Array& key, const Shape& shape = {}, DType dtype = DType::float32, Loc loc = Loc::current());
/// Standard logistic, log(u) - log1p(-u).
Array logistic(const Array& key, const Shape& shape = {}, DType dtype = DType::float32, Loc loc = Loc::current());
/// Standard Cauchy, tan(pi * (u - 1/2)).
Array cauchy(const Array& key, const Shape& shape = {}, DType dtype = DType::float32, Loc loc = Loc::current());
/// Gamma(a, 1) (Marsaglia-Tsang, with JAX's key splitting; a < 1 boosted). Differentiable in a (implicit
/// reparameterisation, as JAX).
Array gamma(const Array& key, const Array& a, std::optional<Shape> shape = std::nullopt,
            DType dtype = DType::float32, Loc loc = Loc::current());
/// log of a Gamma(a, 1) sample, accurate for small a (as jax.random.loggamma).
Array loggamma(const Array& key, const Array& a, std::optional<Shape> shape = std::nullopt,
               DType dtype = DType::float32, Loc loc = Loc::current());
/// Beta(a, b) from two loggamma draws.
Array beta(const Array& key, const Array& a, const Array& b, std::optional<Shape> shape = std::nullopt,
           DType dtype = DType::float32, Loc loc = Loc::current());
/// Dirichlet(alpha) along alpha's last axis (softmax of loggamma draws); shape excludes that axis.
Array dirichlet(const Array& key, const Array& alpha, std::optional<Shape> shape = std::nullopt,
                DType dtype = DType::float32, Loc loc = Loc::current());
/// Poisson(lam) as integers (Knuth below 10, JAX's transformed rejection above).
Array poisson(const Array& key, const Array& lam, std::optional<Shape> shape = std::nullopt,
              DType dtype = DType::int32, Loc loc = Loc::current());
/// Binomial(n, p) as floats (n, p broadcast; inversion when n * min(p, 1-p) <= 10, else BTRS, as JAX's
/// jax.random.binomial; src/api/random_binomial.cpp).
Array binomial(const Array& key, const Array& n, const Array& p, std::optional<Shape> shape = std::nullopt,
               DType dtype = DType::float32, Loc loc = Loc::current());
/// Geometric(p) on {1, 2, ...} as integers.
Array geometric(const Array& key, const Array& p, std::optional<Shape> shape = std::nullopt,
                DType dtype = DType::int32, Loc loc = Loc::current());
/// -1 or +1 with equal probability, in dtype (int32 by default).
Array rademacher(const Array& key, const Shape& shape = {}, DType dtype = DType::int32, Loc loc = Loc::current());
/// Maxwell: the norm of three standard normals.
Array maxwell(const Array& key, const Shape& shape = {}, DType dtype = DType::float32, Loc loc = Loc::current());
/// Weibull (minimum): (-log1p(-u)) ** (1 / concentration) * scale.
Array weibull_min(const Array& key, const Array& scale, const Array& concentration, const Shape& shape = {},
                  DType dtype = DType::float32, Loc loc = Loc::current());
/// Log-normal: exp(sigma * normal), sigma broadcast to shape (default: sigma's shape).
Array lognormal(const Array& key, const Array& sigma = Array(1.0), std::optional<Shape> shape = std::nullopt,
                DType dtype = DType::float32, Loc loc = Loc::current());
/// Rayleigh(scale): scale * sqrt(-2 log u), scale broadcast to shape (default: scale's shape).
Array rayleigh(const Array& key, const Array& scale = Array(1.0), std::optional<Shape> shape = std::nullopt,
               DType dtype = DType::float32, Loc loc = Loc::current());
/// The double-sided Maxwell: sign * maxwell * scale + loc, a random sign (rademacher) per draw; as JAX, the result's
/// shape is shape (default: loc and scale broadcast) followed by loc and scale's broadcast shape.
Array double_sided_maxwell(const Array& key, const Array& loc, const Array& scale, const Shape& shape = {},
                           DType dtype = DType::float32, Loc loc_ = Loc::current());
/// Pareto(b): exp(exponential / b).
Array pareto(const Array& key, const Array& b, std::optional<Shape> shape = std::nullopt,
             DType dtype = DType::float32, Loc loc = Loc::current());
/// Student's t(df).
Array t(const Array& key, const Array& df, std::optional<Shape> shape = std::nullopt, DType dtype = DType::float32,
        Loc loc = Loc::current());
/// Chi-square(df) = 2 * Gamma(df / 2).
Array chisquare(const Array& key, const Array& df, std::optional<Shape> shape = std::nullopt,
                DType dtype = DType::float32, Loc loc = Loc::current());
/// F(dfnum, dfden).
Array f(const Array& key, const Array& dfnum, const Array& dfden, std::optional<Shape> shape = std::nullopt,
        DType dtype = DType::float32, Loc loc = Loc::current());
/// Generalized normal with exponent p (density ~ exp(-|x|^p)).
Array generalized_normal(const Array& key, double p, const Shape& shape = {}, DType dtype = DType::float32,
                         Loc loc = Loc::current());
/// Triangular(left, mode, right).
Array triangular(const Array& key, const Array& left, const Array& mode, const Array& right,
                 std::optional<Shape> shape = std::nullopt, DType dtype = DType::float32, Loc loc = Loc::current());
/// Wald (inverse Gaussian) with the given mean and scale 1.
Array wald(const Array& key, const Array& mean, std::optional<Shape> shape = std::nullopt,
           DType dtype = DType::float32, Loc loc = Loc::current());
/// Multivariate normal: mean + factor @ normal, factor from method "cholesky", "eigh" or "svd" of cov.
Array multivariate_normal(const Array& key, const Array& mean, const Array& cov,
                          std::optional<Shape> shape = std::nullopt, DType dtype = DType::float32,
                          std::string_view method = "cholesky", Loc loc = Loc::current());
/// Haar-random orthogonal n x n matrices (n x m when m is given), of shape (*shape, n, m).
Array orthogonal(const Array& key, int64_t n, const Shape& shape = {}, DType dtype = DType::float32,
                 std::optional<int64_t> m = std::nullopt, Loc loc = Loc::current());
/// Uniform points in the d-dimensional unit p-norm ball, shape (*shape, d).
Array ball(const Array& key, int64_t d, double p = 2, const Shape& shape = {}, DType dtype = DType::float32,
           Loc loc = Loc::current());

}  // namespace jitx::random
