#pragma once
// The consensus study's call plan (orbit seed, section 6 and Appendix B "Consensus protocol";
// docs/consensus.md): which prompts are sent, with which sampling settings, and how the answers
// group into arms.
//
// Subset: the first `per_template` bases by id of each study template (default the first 30 of
// CV, DD, RL and FC: 120 bases). Three arms of three calls per base:
//   self_consistency  canonical, canonical, canonical      (resampled)
//   paraphrase        canonical, paraphrase1, paraphrase2
//   representation    canonical, fraction, unit            (percent instead of unit for FC)
// Call position i (0, 1, 2) of every arm uses seed s + i and the same max_tokens cap, so the
// arms are matched position by position. Two tiers: `stochastic` (all three arms, the user's
// sampling settings) and `deterministic` (greedy: temperature 0, top_k 1, top_p 1; only the two
// prompt-diverse arms, since greedy self-consistency would repeat one answer).
//
// A call is a request (tier, prompt, seed); identical requests are planned once and shared by the
// arms that use them (position 0 of every arm in a tier is the same canonical request with seed
// s), so one tier needs 7 requests per base (stochastic) or 5 (deterministic).
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "io/json.hpp"
#include "num/rational.hpp"
#include "orbit/benchmark.hpp"

namespace numcheck::consensus {

inline constexpr const char* kArms[] = {"self_consistency", "paraphrase", "representation"};
inline constexpr const char* kTiers[] = {"stochastic", "deterministic"};
inline constexpr std::size_t kCalls = 3;  // calls per arm

struct Sampling {
  double temperature = 0.0;
  double top_p = 1.0;
  int top_k = 1;
};

struct PlanOptions {
  std::vector<std::string> templates = {"CV", "DD", "RL", "FC"};
  std::size_t per_template = 30;
  std::uint64_t seed = 20260725;  // s: call position i uses seed s + i
  int max_tokens = 2048;          // the cap shared by every call
  // Stochastic tier defaults (our decision, docs/consensus.md): moderate-temperature nucleus sampling.
  Sampling stochastic{0.7, 0.95, 20};
  // Third representation view per template; templates not listed use "unit".
  std::map<std::string, std::string> third_view = {{"FC", "percent"}};
  std::vector<std::string> tiers = {"stochastic", "deterministic"};
};

// One request to send.
struct Request {
  std::string id;  // "<tier>:<prompt_id>@<i>", unique in the plan
  std::string tier;
  std::string prompt_id;
  std::string base_id;
  std::string template_id;
  std::string view;
  std::size_t seed_offset = 0;  // i
  std::uint64_t seed = 0;       // s + i
  Sampling sampling;
  int max_tokens = 0;
  std::string prompt;
  num::Rational expected;
  std::string answer_unit;
};

// One arm of one tier for one base: the requests of positions 0..2 (indices into Plan::requests).
struct ArmCalls {
  std::string tier;
  std::string arm;
  std::string base_id;
  std::array<std::size_t, kCalls> requests{};
};

struct Plan {
  PlanOptions options;
  std::string benchmark_dir;                        // as given (provenance only)
  std::map<std::string, std::string> bench_sha256;  // benchmark file hashes at planning time
  // generator_version, prompt_version, seed, spec_sha256 of the benchmark (orbit::generator_provenance;
  // empty for a plan written before they were recorded)
  io::OrderedJson bench_generator = io::OrderedJson::object();
  std::vector<std::string> bases;                    // subset base ids, template order then id
  std::map<std::string, num::Rational> expected;     // base_id -> answer (canonical unit)
  std::map<std::string, std::string> answer_unit;    // base_id -> canonical unit
  std::map<std::string, std::string> base_template;  // base_id -> template id
  std::vector<Request> requests;
  std::vector<ArmCalls> arms;  // tier, arm, base in plan order

  [[nodiscard]] std::vector<std::string> arms_of(std::string_view tier) const;
  [[nodiscard]] const Request* find_request(std::string_view id) const;
};

// Arms of a tier: all three for stochastic, the two prompt-diverse ones for deterministic.
[[nodiscard]] std::vector<std::string> tier_arms(std::string_view tier);

// Builds the plan. Throws Error when a template has fewer than per_template bases or a subset base
// lacks a view the arms need (the benchmark must be generated with --paraphrases).
[[nodiscard]] Plan make_plan(const orbit::Benchmark& bench, const PlanOptions& options);

// The plan file (one JSON document; docs/consensus.md) and back. read_plan checks every field and
// cross-reference and throws Error naming the file and field.
[[nodiscard]] io::OrderedJson plan_to_json(const Plan& plan);
[[nodiscard]] Plan plan_from_json(const io::Json& j, std::string_view where);
void write_plan(const Plan& plan, const std::filesystem::path& path);
[[nodiscard]] Plan read_plan(const std::filesystem::path& path);

}  // namespace numcheck::consensus
