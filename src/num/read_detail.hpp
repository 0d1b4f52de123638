#pragma once
// Internals of the number readers shared by read.cpp and the tests: the scanner that proposes
// every reading starting at a position. Not part of the public API.
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "num/read.hpp"

namespace numcheck::num::detail {

// One reading that starts at the scan position and ends at `end`: a value in a form (ok), or a
// definite rejection such as "3/0" or "1e99999" (not ok, with the reason).
struct Candidate {
  bool ok = false;
  NumberForm form = NumberForm::kInteger;
  std::size_t end = 0;
  RejectReason reason = RejectReason::kNotANumber;
  std::optional<Rational> value;  // set when ok (a rejection does not build a Rational)
};

// Every reading at `pos` (all forms, no boundary rules), written into `out` (cleared first).
void scan_at(std::string_view text, std::size_t pos, std::vector<Candidate>& out);
// True when a number word (of the words grammar scan_at reads at a letter) starts at pos.
bool number_word_at(std::string_view text, std::size_t pos);
// The longest candidate (a rejection wins a tie), or nullptr.
[[nodiscard]] const Candidate* longest(const std::vector<Candidate>& c);
// End of the run of digits joined by '.' or ',' that starts at i ("1.2.3", "12,34").
// read_number without its fixed-width fast path: the scanner alone. The property tests and the
// fuzzer compare read_small_number with it.
[[nodiscard]] ReadResult read_number_scan(std::string_view text, FormSet allowed);
[[nodiscard]] std::size_t skip_numeric_token(std::string_view text, std::size_t i);

}  // namespace numcheck::num::detail
