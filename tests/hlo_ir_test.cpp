// The HLO IR utilities: deep clones, use replacement, insertion and removal, dead-code removal, topological sort,
// and fingerprints that ignore names but see structure and constant values.
#include <catch2/catch.hpp>

#include <algorithm>

#include "hlo_test_util.h"

using namespace jitx;
using namespace jitx::hlo;
using namespace jitx::hlo::testing;

TEST_CASE("IR: clone is deep and independent", "[hlo]") {
  auto m = parse(kSmall);
  auto c = m->clone();
  verify(*c);
  CHECK(print_hlo(*c) == print_hlo(*m));
  CHECK(c->fingerprint() == m->fingerprint());
  for (size_t k = 0; k < m->entry->instructions.size(); ++k) {
    CHECK(c->entry->instructions[k].get() != m->entry->instructions[k].get());
    CHECK(c->entry->instructions[k]->parent == c->entry);
    for (auto* o : c->entry->instructions[k]->operands) CHECK(o->parent == c->entry);
  }
  c->entry->find("c")->opcode = Opcode::kAdd;
  CHECK(m->entry->find("c")->opcode == Opcode::kSubtract);
  CHECK(c->unique_name("x") == m->unique_name("x"));  // the name counter is copied too
}

TEST_CASE("IR: replace_all_uses, insert_before, remove, dead-code removal, topological sort", "[hlo]") {
  auto m = parse(kSmall);
  Computation* c = m->entry;
  Instruction *p = c->find("p"), *a = c->find("a"), *b = c->find("b");
  // insert_before keeps the order valid and leaves the root alone.
  Instruction* n = c->insert_before(a, Opcode::kNegate, a->shape, {p});
  CHECK(c->root->name == "c");
  CHECK(c->replace_all_uses(a, n));
  CHECK(a->users().size() == 0);
  verify(*m);
  CHECK(c->remove_dead_instructions() == 2);  // %a and %dead
  CHECK(c->find("a") == nullptr);
  CHECK(c->find("dead") == nullptr);
  verify(*m);
  CHECK_THROWS(c->remove_instruction(c->root));
  CHECK_THROWS(c->remove_instruction(p));
  // A root replaced by another instruction moves the root.
  CHECK(c->replace_all_uses(c->root, b));
  CHECK(c->root == b);
  c->remove_instruction(c->find("c"));
  verify(*m);
  // Reordering: put the root first, sort it back.
  std::rotate(c->instructions.begin(), c->instructions.end() - 1, c->instructions.end());
  CHECK_THROWS_AS(verify(*m), CompileError);
  c->sort_topologically();
  verify(*m);
}

TEST_CASE("IR: fingerprint ignores names, sees structure and constant values", "[hlo]") {
  auto a = parse(R"(HloModule one
ENTRY %main (x: f32[3]) -> f32[3] {
  %x = f32[3] parameter(0)
  %k = f32[3] constant({1, 2, 3})
  ROOT %m = f32[3] multiply(%x, %k)
}
)");
  auto b = parse(R"(HloModule two
ENTRY %entry.7 (y.1: f32[3]) -> f32[3] {
  %y.1 = f32[3] parameter(0)
  %c.2 = f32[3] constant({1, 2, 3})
  ROOT %mul.3 = f32[3] multiply(%y.1, %c.2)
}
)");
  auto c = parse(R"(HloModule one
ENTRY %main (x: f32[3]) -> f32[3] {
  %x = f32[3] parameter(0)
  %k = f32[3] constant({1, 2, 4})
  ROOT %m = f32[3] multiply(%x, %k)
}
)");
  CHECK(a->fingerprint().size() == 32);
  CHECK(a->fingerprint() == b->fingerprint());
  CHECK(a->fingerprint() != c->fingerprint());
}
