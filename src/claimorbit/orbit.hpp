#pragma once
// Claim orbits: a real numerical claim rewritten so that each quantity is written in another,
// exactly equivalent form ("$86,000" -> "$86 thousand", "80%" -> "4/5", "5 km" -> "5000
// meters"), every other byte kept. A variant is kept only when it reads back through the claims
// layer (claims::find_segments) to exactly the same quantities as the original. Dates, years,
// vague quantities and multiplicative trend words are never rewritten; segments with an
// approximator or a trend word only on request. docs/claim-orbits.md states the method.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/json.hpp"
#include "num/rational.hpp"

namespace numcheck::claimorbit {

// The forms, the scale words they write and the naturalness rules (data/claims/orbit.json), and the
// plausible range of the number per target unit of the unit form (data/claims/orbit_units.json).
struct FormSpec {
  std::vector<std::string> forms;  // all forms, in output order
  std::vector<std::pair<std::string, num::Rational>> scale_words, scale_letters;  // largest first
  int max_scale_decimals = 3;
  long max_fraction_denominator = 12;
  int max_unit_decimals = 3;
  // Naturalness: which forms apply to which quantities (docs/claim-orbits.md).
  bool words_integers_only = false;                 // number words only for integers
  int words_max_significant_digits = 0;             // 0 = any
  num::Rational scientific_min_abs{1000};           // e-notation only from this magnitude up
  bool fraction_proper_only = false;                // p/q only for ratios strictly between 0 and 1
  std::optional<num::Rational> scale_max_mantissa;  // scale forms: mantissa below this
  std::vector<std::string> percent_from_forms;      // number forms a plain ratio may become a percentage from
                                                    // (empty = any)
  std::optional<std::pair<num::Rational, num::Rational>> year_like;  // plain 4-digit integers never rewritten
  // Unit form targets: unit id -> [min, max] of the number written in that unit; empty = any unit.
  std::map<std::string, std::pair<num::Rational, num::Rational>> unit_ranges;
  [[nodiscard]] static FormSpec parse(std::string_view json_text, std::string_view where);
  // Reads the unit ranges (orbit_units.json) into this spec.
  void parse_unit_ranges(std::string_view json_text, std::string_view where);
  [[nodiscard]] static const FormSpec& builtin();
};

struct GenerateOptions {
  std::vector<std::string> forms;    // empty = all forms of the spec
  bool rewrite_approximate = false;  // also rewrite numbers in segments with an approximator/trend
  std::uint64_t seed = 20260725;     // picks the target unit among exact candidates
};

// One rewritten span: [begin, end) are byte offsets in the variant's text; `value` is the exact
// quantity the span states (as the claims layer reads it: 86000 for "$86k", 4/5 for "80%").
struct Span {
  std::size_t begin = 0, end = 0;
  num::Rational value;
  std::string original, rewritten;
};

struct Variant {
  std::string id;    // "<claim id>#<form>"
  std::string form;  // one of FormSpec::forms
  std::string text;
  std::vector<Span> spans;  // in text order
};

struct Skipped {
  std::string segment;  // the segment's text in the claim
  std::string reason;   // temporal, vague, trend_word, approximator, trend, no_exact_form, ...
};

struct ClaimOrbit {
  std::string id, claim;
  std::vector<Variant> variants;
  std::vector<Skipped> skipped;
};

// All variants of one claim (one per form that rewrites at least one segment exactly).
[[nodiscard]] ClaimOrbit generate_orbit(std::string_view id, std::string_view claim,
                                        const GenerateOptions& opt = {},
                                        const FormSpec& spec = FormSpec::builtin());

// The quantities of a text as the claims layer reads them, one key per segment, in order: the
// read-back check compares these (equal keys = the same exact quantities, dates and periods).
[[nodiscard]] std::vector<std::string> quantity_keys(std::string_view text);

// Bytes this thread has handed to the claims segmenter in generate_orbit and quantity_keys so far:
// the measure of generation's work (linear in the claim's length; tests check it).
[[nodiscard]] std::size_t segmenter_bytes_read() noexcept;

[[nodiscard]] io::OrderedJson orbit_json(const ClaimOrbit& o);
[[nodiscard]] ClaimOrbit orbit_from_json(const io::Json& j, std::string_view where);
// Reads a claims.jsonl written by generate (throws Error naming file:line on a bad line).
[[nodiscard]] std::vector<ClaimOrbit> read_orbits(const std::filesystem::path& path);

// Generates the orbits of every claim in a claims file (any format the claims loaders read; a
// claim's id is claims::claim_id) into `out_dir`: claims.jsonl (one orbit_json line per claim, in
// file order) and manifest.json (version, input and output SHA-256, options, counts per form and
// per skip reason). Same input and options: byte-identical files. Malformed input records are
// returned as warnings.
struct GenerateSummary {
  std::size_t claims = 0, variants = 0, claims_with_variants = 0;
  std::map<std::string, std::size_t> variants_by_form, spans_by_form, skipped_by_reason;
  std::vector<std::string> warnings;
};
GenerateSummary generate_to_dir(const std::filesystem::path& claims_file,
                                const std::filesystem::path& out_dir, const GenerateOptions& opt = {});

}  // namespace numcheck::claimorbit
