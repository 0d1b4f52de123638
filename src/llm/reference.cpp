#include "llm/reference.hpp"

#include <chrono>
#include <string>
#include <unordered_map>
#include <utility>

#include "core/ascii.hpp"
#include "core/error.hpp"
#include "core/prng.hpp"
#include "core/version.hpp"
#include "num/units.hpp"
#include "orbit/solver.hpp"

namespace numcheck::llm {

namespace {

using ascii::trim;

// A rate from its decimal text, in [0, 1]. Rates steer sampling decisions only (never labels), so
// a double is fine here.
double parse_rate(std::string_view text, std::string_view entry) {
  std::string t(trim(text));
  std::size_t used = 0;
  double v = -1;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (t.empty() || used != t.size() || !(v >= 0.0 && v <= 1.0)) {
    fail(ErrorCode::kUsage, "--inject: '{}' needs a rate between 0 and 1", entry);
  }
  return v;
}

std::int64_t approx_tokens(std::size_t bytes) { return static_cast<std::int64_t>((bytes + 3) / 4); }

// Power of ten k > 0 of the slip: answering in a sub-unit but labelling the asked unit. 3 when the
// registry has a sub-unit 10^3 times smaller (L -> mL, km -> m, m -> mm), else the smallest k of a
// power-of-ten sub-unit it has, else 3 (also for unknown units; 2 for dimensionless answers, the
// percent slip).
int unit_slip_exponent(const std::string& unit) {
  if (unit.empty()) return 2;
  try {
    const auto& reg = num::UnitRegistry::builtin();
    const num::Unit* u = reg.by_id(unit);
    if (u == nullptr) u = reg.lookup(unit);
    if (u == nullptr) return 3;
    int best = 0;
    for (const auto& other : reg.units()) {
      if (other.dimension != u->dimension || other.factor.is_zero()) continue;
      const num::Rational ratio = u->factor / other.factor;  // how many `other` per `u`
      for (int k = 1; k <= 6; ++k) {
        if (ratio != num::Rational::pow10(k)) continue;
        if (k == 3) return 3;
        if (best == 0 || k < best) best = k;
      }
    }
    return best == 0 ? 3 : best;
  } catch (const Error&) {
    return 3;
  }
}

std::string final_line(const std::string& number, const std::string& unit) {
  return unit.empty() ? "FINAL: " + number : "FINAL: " + number + " " + unit;
}

}  // namespace

FaultRates parse_fault_rates(std::string_view spec) {
  FaultRates r;
  std::string_view rest = trim(spec);
  bool seen[4] = {false, false, false, false};
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view entry = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (entry.empty()) continue;
    const std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos) fail(ErrorCode::kUsage, "--inject: '{}' is not name=rate", entry);
    const std::string_view name = trim(entry.substr(0, eq));
    const double v = parse_rate(entry.substr(eq + 1), entry);
    int idx = -1;
    if (name == "times_ten") {
      idx = 0;
      r.times_ten = v;
    } else if (name == "markdown") {
      idx = 1;
      r.markdown = v;
    } else if (name == "unit_slip") {
      idx = 2;
      r.unit_slip = v;
    } else if (name == "truncation") {
      idx = 3;
      r.truncation = v;
    } else {
      fail(ErrorCode::kUsage,
           "--inject: unknown fault '{}' (known: times_ten, markdown, unit_slip, truncation)", name);
    }
    if (seen[idx]) fail(ErrorCode::kUsage, "--inject: fault '{}' given twice", name);
    seen[idx] = true;
  }
  if (r.times_ten + r.markdown + r.unit_slip + r.truncation > 1.0 + 1e-12) {
    fail(ErrorCode::kUsage, "--inject: the rates add up to more than 1");
  }
  return r;
}

io::OrderedJson to_json(const FaultRates& r) {
  io::OrderedJson j = io::OrderedJson::object();
  j["times_ten"] = r.times_ten;
  j["markdown"] = r.markdown;
  j["unit_slip"] = r.unit_slip;
  j["truncation"] = r.truncation;
  return j;
}

std::string_view fault_name(Fault f) noexcept {
  switch (f) {
    case Fault::kNone:
      return "none";
    case Fault::kTimesTen:
      return "times_ten";
    case Fault::kMarkdown:
      return "markdown";
    case Fault::kUnitSlip:
      return "unit_slip";
    case Fault::kTruncation:
      return "truncation";
  }
  return "none";
}

Fault draw_fault(const FaultRates& rates, std::uint64_t seed, std::string_view item_id) {
  if (!rates.any()) return Fault::kNone;
  Rng rng(seed, item_id);
  const double u = rng.unit();
  double acc = rates.times_ten;
  if (u < acc) return Fault::kTimesTen;
  acc += rates.markdown;
  if (u < acc) return Fault::kMarkdown;
  acc += rates.unit_slip;
  if (u < acc) return Fault::kUnitSlip;
  acc += rates.truncation;
  if (u < acc) return Fault::kTruncation;
  return Fault::kNone;
}

std::string plain_number(const num::Rational& v) {
  if (v.is_integer()) return v.str();
  if (auto d = v.to_decimal()) return *d;
  return v.str();
}

std::optional<std::string> times_ten_number(const num::Rational& v) {
  if (v.is_zero() || !v.has_finite_decimal()) return std::nullopt;
  // k with 1 <= |v| / 10^k < 10.
  const num::Rational a = v.abs();
  int k = 0;
  while (a / num::Rational::pow10(k) >= num::Rational(10)) ++k;
  while (a / num::Rational::pow10(k) < num::Rational(1)) --k;
  const num::Rational mantissa = v / num::Rational::pow10(k);
  auto m = mantissa.to_decimal();
  if (!m) return std::nullopt;
  return *m + " \u00d7 10^" + std::to_string(k);
}

ReferenceReply reference_reply(const SolvedAnswer& answer, Fault fault, std::int64_t max_tokens) {
  static constexpr std::string_view kLead = "The quantities in the question determine the answer exactly.\n";
  ReferenceReply r;
  r.finish_reason = "stop";
  r.applied = fault;
  std::string line;
  switch (fault) {
    case Fault::kTimesTen:
      if (auto t = times_ten_number(answer.value)) {
        line = final_line(*t, answer.unit);
      } else {
        r.applied = Fault::kNone;
        line = final_line(plain_number(answer.value), answer.unit);
      }
      break;
    case Fault::kMarkdown:
      line = "**" + final_line(plain_number(answer.value), answer.unit) + "**";
      break;
    case Fault::kUnitSlip: {
      const int k = unit_slip_exponent(answer.unit);
      line = final_line(plain_number(answer.value * num::Rational::pow10(k)), answer.unit);
      break;
    }
    case Fault::kTruncation:
    case Fault::kNone:
      line = final_line(plain_number(answer.value), answer.unit);
      break;
  }
  if (r.applied == Fault::kTruncation) {
    // Cut inside the lead sentence, before any FINAL line: what a generation cap does to a model
    // that reasons first.
    r.content = std::string(kLead.substr(0, kLead.size() / 2));
    r.finish_reason = "length";
    r.completion_tokens = max_tokens;
    return r;
  }
  r.content = std::string(kLead) + line;
  r.completion_tokens = approx_tokens(r.content.size());
  if (max_tokens > 0 && r.completion_tokens > max_tokens) {
    // The cap applies to the simulated system too.
    r.content = r.content.substr(0, static_cast<std::size_t>(max_tokens) * 4);
    r.finish_reason = "length";
    r.completion_tokens = max_tokens;
  }
  return r;
}

SolveFn benchmark_solver(std::shared_ptr<const orbit::Benchmark> bench) {
  auto by_text = std::make_shared<std::unordered_map<std::string, std::size_t>>();
  for (std::size_t i = 0; i < bench->views.size(); ++i) by_text->emplace(bench->views[i].prompt, i);
  return [bench = std::move(bench), by_text](std::string_view item_id, std::string_view prompt,
                                             std::string* why) -> std::optional<SolvedAnswer> {
    const orbit::View* v = nullptr;
    if (auto it = by_text->find(std::string(prompt)); it != by_text->end()) {
      v = &bench->views[it->second];
    } else {
      v = bench->find_view(item_id);
      if (v != nullptr && v->prompt != prompt) v = nullptr;
    }
    if (v == nullptr) {
      if (why != nullptr) *why = "the prompt is not one of the benchmark's prompts";
      return std::nullopt;
    }
    orbit::SolveResult res = orbit::solve_view(*bench, *v);
    if (!res.value) {
      if (why != nullptr) *why = res.error;
      return std::nullopt;
    }
    return SolvedAnswer{*res.value, v->answer_unit};
  };
}

namespace {

class ReferenceSession : public Session {
 public:
  ReferenceSession(const FaultRates& rates, const SolveFn& solver) : rates_(rates), solver_(solver) {}

  Attempt send(const Request& request, std::size_t /*endpoint*/) override {
    const auto t0 = std::chrono::steady_clock::now();
    Attempt a;
    std::string why;
    std::optional<SolvedAnswer> ans;
    try {
      ans = solver_(request.item_id, request.prompt, &why);
    } catch (const Error& e) {
      why = e.what();
    }
    if (!ans) {
      a.status = Attempt::Status::kFatal;
      a.error = "reference solver cannot answer this prompt: " + why;
      return a;
    }
    const Fault f = draw_fault(rates_, request.sampling.seed, request.item_id);
    const ReferenceReply r = reference_reply(*ans, f, request.sampling.max_tokens);
    a.status = Attempt::Status::kOk;
    a.completion.content = r.content;
    a.completion.finish_reason = r.finish_reason;
    a.completion.model = "reference";
    a.completion.simulated_fault = std::string(fault_name(r.applied));
    const std::int64_t pt = approx_tokens(request.prompt.size());
    a.completion.usage = {{"prompt_tokens", pt},
                          {"completion_tokens", r.completion_tokens},
                          {"total_tokens", pt + r.completion_tokens}};
    a.latency = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
    return a;
  }

 private:
  FaultRates rates_;
  SolveFn solver_;
};

class ReferenceBackend : public Backend {
 public:
  ReferenceBackend(const FaultRates& rates, SolveFn solver) : rates_(rates), solver_(std::move(solver)) {}
  [[nodiscard]] std::string kind() const override { return "reference"; }
  [[nodiscard]] bool simulated() const override { return true; }
  [[nodiscard]] std::vector<std::string> endpoints() const override { return {"reference"}; }
  [[nodiscard]] Api api() const override { return Api::kChat; }
  [[nodiscard]] ServerInfo probe() override {
    ServerInfo s;
    s.model = "reference";
    s.identity = {{"system", "reference"}, {"numcheck_version", kVersion}, {"inject", to_json(rates_)}};
    s.info = io::OrderedJson::object();
    s.info["system"] = "reference";
    s.info["description"] =
        "numcheck's built-in simulated system: the orbit reference solver's exact answer, with injected "
        "faults";
    s.info["inject"] = to_json(rates_);
    s.info["numcheck_version"] = kVersion;
    return s;
  }
  [[nodiscard]] std::unique_ptr<Session> open_session() override {
    return std::make_unique<ReferenceSession>(rates_, solver_);
  }

 private:
  FaultRates rates_;
  SolveFn solver_;
};

}  // namespace

std::unique_ptr<Backend> make_reference_backend(const FaultRates& rates, SolveFn solver) {
  if (!solver) fail(ErrorCode::kUsage, "--system reference needs a benchmark to answer from");
  return std::make_unique<ReferenceBackend>(rates, std::move(solver));
}

}  // namespace numcheck::llm
