// The api walk's table: numpy_misc.h and random's key helpers (see api_walk_table.h).
#pragma once
#include "jitx/numpy_misc.h"
#include "jitx/random.h"

namespace {

const std::vector<Case> kNumpyMisc = {
    JITX_U(jnp, absolute),
    JITX_U(jnp, positive),
    JITX_U(jnp, conj),
    JITX_U(jnp, conjugate),
    JITX_U(jnp, real),
    JITX_U(jnp, imag),
    JITX_U(jnp, isreal),
    JITX_U(jnp, iscomplex),
    JITX_U(jnp, spacing),
    {"jnp::around", [](Walk& w) { unary(w, [](const Array& x) { return jnp::around(x, 1); }); }},
    {"jnp::copy", [](Walk& w) { unary(w, [](const Array& x) { return jnp::copy(x); }); }},
    {"jnp::isrealobj",
     [](Walk& w) {
       w.ok("f32[2,3]", {f23()}, [](A a) { return Array(jnp::isrealobj(a[0])); }, {});
       w.invalid([](A a) { return Array(jnp::isrealobj(a[0])); });
     }},
    {"jnp::iscomplexobj",
     [](Walk& w) {
       w.ok("i32[2,3]", {i23()}, [](A a) { return Array(jnp::iscomplexobj(a[0])); }, {});
       w.invalid([](A a) { return Array(jnp::iscomplexobj(a[0])); });
     }},
    {"jnp::isscalar",
     [](Walk& w) {
       w.ok("f32[2,3]", {f23()}, [](A a) { return Array(jnp::isscalar(a[0])); }, {});
       w.invalid([](A a) { return Array(jnp::isscalar(a[0])); });
     }},
    {"jnp::partition",
     [](Walk& w) {
       w.ok("kth 1 along 1", {f23()}, [](A a) { return jnp::partition(a[0], 1); }, {2, 3});
       w.ok("kth -1 along 0", {f23()}, [](A a) { return jnp::partition(a[0], -1, 0); }, {2, 3});
       w.err("kth 3 of 3", {f23()}, [](A a) { return jnp::partition(a[0], 3); });
       w.err("axis 2", {f23()}, [](A a) { return jnp::partition(a[0], 0, 2); });
       w.invalid([](A a) { return jnp::partition(a[0], 0); });
     }},
    {"jnp::gradient",
     [](Walk& w) {
       w.ok("all axes (first)", {f23()}, [](A a) { return jnp::gradient(a[0])[0]; }, {2, 3});
       w.ok("axis 1, coordinates", {f23(), ones({3})}, [](A a) { return jnp::gradient(a[0], 1, jnp::cumsum(a[1])); },
            {2, 3});
       w.err("an axis of 1", {ones({1, 3})}, [](A a) { return jnp::gradient(a[0], 0); });
       w.err("coordinates of another length", {f23(), f4()}, [](A a) { return jnp::gradient(a[0], 1, a[1]); });
       w.invalid([](A a) { return jnp::gradient(a[0], 0); });
     }},
    {"jnp::ix_",
     [](Walk& w) {
       w.ok("(4,), (4,)", {f4()}, [](A a) { return jnp::ix_({a[0], a[0]})[1]; }, {1, 4});
       w.err("a 2-d argument", {f23()}, [](A a) { return jnp::ix_({a[0]})[0]; });
       w.invalid([](A a) { return jnp::ix_({a[0]})[0]; });
     }},
    {"jnp::fromfunction",
     [](Walk& w) {
       w.ok("(2, 3)", {s0()},
            [](A a) {
              return jnp::fromfunction([&](const Array& i, const Array& j) { return i * j + a[0]; }, {2, 3});
            },
            {2, 3});
       w.err("a 1-argument function for 2 axes", {s0()}, [](A) {
         return jnp::fromfunction([](const Array& i) { return i; }, {2, 3});
       });
     }},
    {"jnp::mask_indices",
     [](Walk& w) {
       auto tri = [](const Array& m, int64_t k) { return jnp::triu(m, k); };
       w.ok("triu of 3, size 6", {s0()}, [=](A) { return jnp::mask_indices(3, tri, 0, 6).first; }, {6});
       w.err("n -1", {s0()}, [=](A) { return jnp::mask_indices(-1, tri).first; });
     }},
    {"jnp::finfo",
     [](Walk& w) {
       w.ok("float32", {s0()}, [](A a) { return Array(jnp::finfo(a[0].dtype()).eps); }, {});
       w.err("int32", {i23()}, [](A a) { return Array(jnp::finfo(a[0].dtype()).eps); });
     }},
    {"jnp::iinfo",
     [](Walk& w) {
       w.ok("int32", {i23()}, [](A a) { return Array(jnp::iinfo(a[0].dtype()).min); }, {});
       w.err("float32", {s0()}, [](A a) { return Array(jnp::iinfo(a[0].dtype()).min); });
     }},
    {"jnp::can_cast",
     [](Walk& w) {
       w.ok("i32 to f32", {i23(), s0()}, [](A a) { return Array(jnp::can_cast(a[0].dtype(), a[1].dtype())); }, {});
       w.err("casting 'maybe'", {i23(), s0()},
             [](A a) { return Array(jnp::can_cast(a[0].dtype(), a[1].dtype(), "maybe")); });
     }},
    {"jnp::isdtype",
     [](Walk& w) {
       w.ok("integral", {i23()}, [](A a) { return Array(jnp::isdtype(a[0].dtype(), "integral")); }, {});
       w.err("kind 'fruit'", {i23()}, [](A a) { return Array(jnp::isdtype(a[0].dtype(), "fruit")); });
     }},
    {"random::key_data",
     [](Walk& w) {
       w.ok("a key", {random::PRNGKey(1)}, [](A a) { return random::key_data(a[0]); }, {2});
       w.err("int32 words", {i23()}, [](A a) { return random::key_data(a[0]); });
       w.invalid([](A a) { return random::key_data(a[0]); });
     }},
    {"random::wrap_key_data",
     [](Walk& w) {
       w.ok("uint32[2]", {random::PRNGKey(1)}, [](A a) { return random::wrap_key_data(a[0]); }, {2});
       w.err("f32[4]", {f4()}, [](A a) { return random::wrap_key_data(a[0]); });
       w.invalid([](A a) { return random::wrap_key_data(a[0]); });
     }},
    {"random::clone",
     [](Walk& w) {
       w.ok("a key", {random::PRNGKey(1)}, [](A a) { return random::clone(a[0]); }, {2});
       w.err("f32[4]", {f4()}, [](A a) { return random::clone(a[0]); });
       w.invalid([](A a) { return random::clone(a[0]); });
     }},
};

}  // namespace
