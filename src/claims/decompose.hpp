#pragma once
// Claim decomposition records and the strict parsers of model answers (docs/claims-reference.md,
// "Decomposition"). ClaimDecomp answers are yes/no questions, one per line; ProgramFC answers are
// programs of `fact_n = Verify("...")` / `answer_n = Question("...")` steps ending in
// `label = Predict(...)`. An answer that does not have that shape is a parse failure carrying the
// raw text and the reason: it is never replaced by a default or random decomposition.
//
// Output record (one JSONL line per claim, in the order of the claims file):
//   {"id", "claim", "method", "questions": [...], "program"?: [...], "status": "ok" |
//    "parse_failure" | "error", "reason"?, "raw"?}
// "raw" (the model's text) is kept for parse failures; "reason" says why a record is not ok.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "claims/claim.hpp"
#include "claims/evidence.hpp"
#include "claims/prompt.hpp"
#include "io/json.hpp"

namespace numcheck::claims {

enum class DecompMethod : std::uint8_t { kClaimDecomp, kProgramFc };
[[nodiscard]] std::string_view decomp_method_name(DecompMethod m) noexcept;  // "claimdecomp", "programfc"
[[nodiscard]] std::optional<DecompMethod> decomp_method_from_name(std::string_view name) noexcept;

struct DecompParse {
  bool ok = false;
  std::vector<std::string> questions;  // ClaimDecomp: the questions; ProgramFC: Verify/Question texts
  std::vector<std::string> program;    // ProgramFC: the program's steps, one per line, unindented
  std::string reason;                  // why it failed
};

// One question per non-empty line. A line may start with a list marker ("1.", "2)", "Q1:",
// "[Q1]:", "-", "*") or "Next Question:" (the released files' separator), which is removed; every
// line must then end with '?'. A line "Questions:" is an echo of the prompt and skipped.
[[nodiscard]] DecompParse parse_claimdecomp(std::string_view response);
// One step per non-empty line (indentation ignored), optionally inside one ``` fence and after an
// echoed "# The claim is that ..." / "def program():". Steps: fact_N = Verify("...") and
// answer_N = Question("...") (f-strings and single quotes allowed), then exactly one final
// label = Predict(...). Anything else fails.
[[nodiscard]] DecompParse parse_programfc(std::string_view response);
[[nodiscard]] DecompParse parse_decomposition(DecompMethod m, std::string_view response);

// The user message for one claim (the prompt's fixed examples, then the claim).
[[nodiscard]] std::string decomposition_prompt(const PromptSpec& spec, DecompMethod m,
                                               std::string_view claim);

struct Decomposition {
  std::string id;
  std::string claim;
  std::string method;
  std::vector<std::string> questions;
  std::optional<std::vector<std::string>> program;
  std::string status = "ok";  // ok | parse_failure | error
  std::string reason;
  std::optional<std::string> raw;
};

[[nodiscard]] io::OrderedJson decomposition_json(const Decomposition& d);
// Reads one output record back (Error naming where and field for a record without
// id/claim/questions or with a field of the wrong type).
[[nodiscard]] Decomposition decomposition_from_record(const io::Record& r);
[[nodiscard]] Decomposition decomposition_from_json(const io::Json& j, std::string_view where);
// Reads a decompositions JSONL file (io::read_jsonl's rules for blank and torn lines).
[[nodiscard]] std::vector<Decomposition> load_decompositions(const std::filesystem::path& path);

// The released ClaimDecomp questions (e.g. QuanTemp's test_claimdecomp.csv, loaded by
// load_claims) in the output format, ids from claim_id (claims/evidence.hpp): method "claimdecomp-released";
// a claim without questions is a parse failure ("no questions in the file").
[[nodiscard]] std::vector<Decomposition> released_decompositions(const std::vector<Claim>& claims);

}  // namespace numcheck::claims
