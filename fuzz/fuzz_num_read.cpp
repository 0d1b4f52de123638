// Fuzz target for the number readers (src/num/read.hpp) and, through them, the writers.
// Besides "no crash, no hang, no leak" it checks invariants and aborts when one fails:
// - read_number accepts only whole inputs; find_numbers returns ordered, non-overlapping, in-bounds
//   matches, each of which read_number accepts on its own with the same value and form;
// - every accepted value written back in its own form reads back to the same value;
// - wherever the fixed-width fast path (read_small_number) answers, the GMP scanner gives the same
//   form and value;
// - Rational's text-only checks agree with its reader: is_exact_form is from_string's acceptance,
//   and is_canonical_form holds only for the text str() writes (always, for terms below 10^19).
// The first input byte chooses the allowed FormSet, the rest is the text.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "num/rational.hpp"
#include "num/read.hpp"
#include "num/read_detail.hpp"
#include "num/write.hpp"

using numcheck::num::FormSet;
using numcheck::num::NumberForm;

namespace {

[[noreturn]] void violated(const char* what) {
  std::fprintf(stderr, "fuzz_num_read: invariant violated: %s\n", what);
  std::abort();
}

void check_roundtrip(const numcheck::num::NumberMatch& m) {
  auto text = numcheck::num::write_number(m.value, m.form);
  if (!text) return;
  auto back = numcheck::num::read_number(*text, FormSet{m.form});
  if (!back || back.match->value != m.value) violated("write then read changed the value");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  FormSet allowed;
  for (int i = 0; i < numcheck::num::kNumberFormCount; ++i) {
    if ((data[0] >> i) & 1u) allowed.add(static_cast<NumberForm>(i));
  }
  if (data[0] == 0) allowed = FormSet::all();
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);

  const auto r = numcheck::num::read_number(text, allowed);
  if (r) {
    if (r.match->begin != 0 || r.match->end != text.size())
      violated("read_number match is not the whole text");
    if (!allowed.has(r.match->form)) violated("read_number returned a form that is not allowed");
    check_roundtrip(*r.match);
  }

  if (const auto small = numcheck::num::read_small_number(text, allowed)) {
    const auto slow = numcheck::num::detail::read_number_scan(text, allowed);
    if (!slow || slow.match->form != small->form || slow.match->value != small->to_rational())
      violated("read_small_number disagrees with the scanner");
    if (const auto eq = small->equals(slow.match->value); eq && !*eq)
      violated("SmallNumber::equals is wrong");
  }

  using numcheck::num::Rational;
  const auto q = Rational::from_string(text);
  if (Rational::is_exact_form(text) != q.has_value()) violated("is_exact_form disagrees with from_string");
  if (q) {
    const bool canonical = q->str() == text;
    if (Rational::is_canonical_form(text) && !canonical)
      violated("is_canonical_form on a text str() does not write");
    if (canonical && !Rational::is_canonical_form(text) && text.size() <= 19)
      violated("is_canonical_form refuses a short canonical text");
  }

  const auto p = numcheck::num::read_number_prefix(text, allowed);
  if (p && (p.match->end > text.size() || p.match->begin >= p.match->end))
    violated("prefix match out of bounds");

  const auto found = numcheck::num::find_numbers(text, allowed, 1000);
  std::size_t last_end = 0;
  for (const auto& m : found) {
    if (m.begin < last_end || m.end <= m.begin || m.end > text.size())
      violated("find_numbers matches out of order");
    if (!allowed.has(m.form)) violated("find_numbers returned a form that is not allowed");
    last_end = m.end;
    const auto alone = numcheck::num::read_number(text.substr(m.begin, m.end - m.begin), allowed);
    if (!alone || alone.match->value != m.value || alone.match->form != m.form) {
      violated("a found number does not read the same on its own");
    }
    check_roundtrip(m);
  }
  return 0;
}
