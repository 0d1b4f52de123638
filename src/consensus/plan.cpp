#include "consensus/plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "io/files.hpp"

namespace numcheck::consensus {

namespace {

constexpr const char* kPlanKind = "numcheck.consensus_plan";
constexpr int kPlanVersion = 1;

// The view at position i of an arm for a base of template `tmpl`.
std::string view_at(std::string_view arm, std::size_t i, const std::string& third) {
  if (i == 0) return "canonical";
  if (arm == "self_consistency") return "canonical";
  if (arm == "paraphrase") return i == 1 ? "paraphrase1" : "paraphrase2";
  return i == 1 ? "fraction" : third;  // representation
}

bool known_tier(std::string_view t) {
  return std::any_of(std::begin(kTiers), std::end(kTiers), [&](const char* k) { return t == k; });
}

void check_sampling(const Sampling& s, std::string_view where) {
  if (!std::isfinite(s.temperature) || s.temperature < 0) fail("{}: temperature must be >= 0", where);
  if (!std::isfinite(s.top_p) || s.top_p <= 0 || s.top_p > 1) fail("{}: top_p must be in (0, 1]", where);
  if (s.top_k < 0) fail("{}: top_k must be >= 0", where);
}

}  // namespace

std::vector<std::string> tier_arms(std::string_view tier) {
  if (tier == "deterministic") return {"paraphrase", "representation"};
  return {"self_consistency", "paraphrase", "representation"};
}

std::vector<std::string> Plan::arms_of(std::string_view tier) const { return tier_arms(tier); }

const Request* Plan::find_request(std::string_view id) const {
  for (const auto& r : requests) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

Plan make_plan(const orbit::Benchmark& bench, const PlanOptions& options) {
  if (options.templates.empty()) fail(ErrorCode::kUsage, "consensus plan: no templates selected");
  if (options.per_template == 0) fail(ErrorCode::kUsage, "consensus plan: --per-template must be >= 1");
  if (options.max_tokens <= 0) fail(ErrorCode::kUsage, "consensus plan: --max-tokens must be >= 1");
  if (options.tiers.empty()) fail(ErrorCode::kUsage, "consensus plan: no tiers selected");
  for (const auto& t : options.tiers) {
    if (!known_tier(t))
      fail(ErrorCode::kUsage, "consensus plan: unknown tier '{}' (stochastic, deterministic)", t);
  }
  check_sampling(options.stochastic, "consensus plan: stochastic sampling");
  if (std::set<std::string>(options.templates.begin(), options.templates.end()).size() !=
      options.templates.size()) {
    fail(ErrorCode::kUsage, "consensus plan: a template is listed twice");
  }

  Plan plan;
  plan.options = options;
  plan.benchmark_dir = bench.dir.string();
  plan.bench_sha256 = bench.file_sha256;
  plan.bench_generator = orbit::generator_provenance(bench);

  for (const auto& tmpl : options.templates) {
    std::vector<const orbit::Base*> of_template;
    for (const auto& b : bench.bases) {
      if (b.template_id == tmpl) of_template.push_back(&b);
    }
    std::sort(of_template.begin(), of_template.end(),
              [](const orbit::Base* a, const orbit::Base* b) { return a->base_id < b->base_id; });
    if (of_template.size() < options.per_template) {
      fail("consensus plan: template {} has {} bases in {}, fewer than the {} the subset needs", tmpl,
           of_template.size(), bench.dir.string(), options.per_template);
    }
    for (std::size_t i = 0; i < options.per_template; ++i) {
      const orbit::Base& b = *of_template[i];
      plan.bases.push_back(b.base_id);
      plan.expected.emplace(b.base_id, b.answer);
      plan.answer_unit.emplace(b.base_id, b.canonical_unit);
      plan.base_template.emplace(b.base_id, b.template_id);
    }
  }

  std::map<std::string, std::size_t> request_index;
  for (const auto& tier : options.tiers) {
    const Sampling sampling = tier == "deterministic" ? Sampling{0.0, 1.0, 1} : options.stochastic;
    for (const auto& arm : tier_arms(tier)) {
      for (const auto& base_id : plan.bases) {
        const std::string& tmpl = plan.base_template.at(base_id);
        const auto third_it = options.third_view.find(tmpl);
        const std::string third = third_it == options.third_view.end() ? "unit" : third_it->second;
        ArmCalls calls{tier, arm, base_id, {}};
        for (std::size_t i = 0; i < kCalls; ++i) {
          const std::string view = view_at(arm, i, third);
          const std::string prompt_id = fmt::format("{}:{}", base_id, view);
          const orbit::View* v = bench.find_view(prompt_id);
          if (v == nullptr) {
            fail("consensus plan: base {} has no '{}' view in {} (the {} arm needs it{})", base_id, view,
                 bench.dir.string(), arm,
                 view.rfind("paraphrase", 0) == 0 ? "; generate the benchmark with --paraphrases" : "");
          }
          if (!(v->expected == plan.expected.at(base_id))) {
            fail("consensus plan: view {} expects {} but its base answer is {}", prompt_id, v->expected.str(),
                 plan.expected.at(base_id).str());
          }
          const std::string id = fmt::format("{}:{}@{}", tier, prompt_id, i);
          auto it = request_index.find(id);
          if (it == request_index.end()) {
            Request r;
            r.id = id;
            r.tier = tier;
            r.prompt_id = prompt_id;
            r.base_id = base_id;
            r.template_id = tmpl;
            r.view = view;
            r.seed_offset = i;
            r.seed = options.seed + i;
            r.sampling = sampling;
            r.max_tokens = options.max_tokens;
            r.prompt = v->prompt;
            r.expected = v->expected;
            r.answer_unit = v->answer_unit;
            it = request_index.emplace(id, plan.requests.size()).first;
            plan.requests.push_back(std::move(r));
          }
          calls.requests[i] = it->second;
        }
        plan.arms.push_back(std::move(calls));
      }
    }
  }
  return plan;
}

// ---- JSON --------------------------------------------------------------------------------------

io::OrderedJson plan_to_json(const Plan& plan) {
  const auto& o = plan.options;
  io::OrderedJson j;
  j["kind"] = kPlanKind;
  j["version"] = kPlanVersion;
  j["benchmark"] = {{"dir", plan.benchmark_dir}, {"sha256", plan.bench_sha256}};
  for (const auto& [k, v] : plan.bench_generator.items()) j["benchmark"][k] = v;
  io::OrderedJson third = io::OrderedJson::object();
  for (const auto& [k, v] : o.third_view) third[k] = v;
  j["options"] = {{"templates", o.templates},
                  {"per_template", o.per_template},
                  {"seed", o.seed},
                  {"max_tokens", o.max_tokens},
                  {"stochastic",
                   {{"temperature", o.stochastic.temperature},
                    {"top_p", o.stochastic.top_p},
                    {"top_k", o.stochastic.top_k}}},
                  {"deterministic", {{"temperature", 0.0}, {"top_p", 1.0}, {"top_k", 1}}},
                  {"third_view", third},
                  {"tiers", o.tiers}};
  io::OrderedJson bases = io::OrderedJson::array();
  for (const auto& b : plan.bases) {
    bases.push_back({{"base_id", b},
                     {"template", plan.base_template.at(b)},
                     {"answer", plan.expected.at(b).str()},
                     {"answer_unit", plan.answer_unit.at(b)}});
  }
  j["bases"] = std::move(bases);
  io::OrderedJson reqs = io::OrderedJson::array();
  for (const auto& r : plan.requests) {
    reqs.push_back({{"id", r.id},
                    {"tier", r.tier},
                    {"prompt_id", r.prompt_id},
                    {"base_id", r.base_id},
                    {"template", r.template_id},
                    {"view", r.view},
                    {"seed_offset", r.seed_offset},
                    {"seed", r.seed},
                    {"temperature", r.sampling.temperature},
                    {"top_p", r.sampling.top_p},
                    {"top_k", r.sampling.top_k},
                    {"max_tokens", r.max_tokens},
                    {"expected", r.expected.str()},
                    {"answer_unit", r.answer_unit},
                    {"prompt", r.prompt}});
  }
  j["requests"] = std::move(reqs);
  io::OrderedJson arms = io::OrderedJson::array();
  for (const auto& a : plan.arms) {
    io::OrderedJson ids = io::OrderedJson::array();
    for (std::size_t i : a.requests) ids.push_back(plan.requests[i].id);
    arms.push_back({{"tier", a.tier}, {"arm", a.arm}, {"base_id", a.base_id}, {"requests", ids}});
  }
  j["arms"] = std::move(arms);
  return j;
}

namespace {

using io::Record;

int get_int(const Record& r, std::string_view key) {
  return static_cast<int>(r.integer(key, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
}

// A JSON object of strings ({"a": "x", ...}) as a map.
std::map<std::string, std::string> string_map(const Record& r, std::string_view key) {
  const Record m = r.object(key);
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : m.json().items()) out[k] = m.string(k);
  return out;
}

void read_plan_options(const Record& o, PlanOptions& opt) {
  opt.templates = o.strings("templates");
  opt.per_template = o.unsigned_integer("per_template");
  opt.seed = o.unsigned_integer("seed");
  opt.max_tokens = get_int(o, "max_tokens");
  const Record st = o.object("stochastic");
  opt.stochastic.temperature = st.number("temperature");
  opt.stochastic.top_p = st.number("top_p");
  opt.stochastic.top_k = get_int(st, "top_k");
  check_sampling(opt.stochastic, o.where() + " options.stochastic");
  opt.third_view.clear();
  for (auto& [k, v] : string_map(o, "third_view")) opt.third_view[k] = v;
  opt.tiers = o.strings("tiers");
  for (const auto& t : opt.tiers) {
    if (!known_tier(t)) fail("{} options: unknown tier '{}'", o.where(), t);
  }
}

void read_plan_bases(const Record& j, Plan& plan) {
  const auto bases = j.objects("bases");
  for (std::size_t i = 0; i < bases.size(); ++i) {
    const Record& b = bases[i];
    const std::string wb = fmt::format("{} bases[{}]", j.where(), i);
    const std::string id = b.string("base_id");
    if (plan.expected.count(id) != 0) fail("{}: base {} is listed twice", wb, id);
    plan.bases.push_back(id);
    plan.base_template[id] = b.string("template");
    plan.expected.emplace(id, num::Rational::parse_exact(b.string("answer"), wb + " answer"));
    plan.answer_unit[id] = b.string("answer_unit");
  }
}

void read_plan_requests(const Record& j, Plan& plan, std::map<std::string, std::size_t>& index) {
  const PlanOptions& opt = plan.options;
  const auto reqs = j.objects("requests");
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    const Record& rj = reqs[i];
    const std::string wr = fmt::format("{} requests[{}]", j.where(), i);
    Request r;
    r.id = rj.string("id");
    r.tier = rj.string("tier");
    if (std::find(opt.tiers.begin(), opt.tiers.end(), r.tier) == opt.tiers.end()) {
      fail("{}: tier '{}' is not one of the plan's tiers", wr, r.tier);
    }
    r.prompt_id = rj.string("prompt_id");
    r.base_id = rj.string("base_id");
    if (plan.expected.count(r.base_id) == 0) fail("{}: base {} is not in the plan's bases", wr, r.base_id);
    r.template_id = rj.string("template");
    r.view = rj.string("view");
    r.seed_offset = rj.unsigned_integer("seed_offset");
    if (r.seed_offset >= kCalls) fail("{}: seed_offset must be 0, 1 or 2", wr);
    r.seed = rj.unsigned_integer("seed");
    r.sampling.temperature = rj.number("temperature");
    r.sampling.top_p = rj.number("top_p");
    r.sampling.top_k = get_int(rj, "top_k");
    check_sampling(r.sampling, wr);
    r.max_tokens = get_int(rj, "max_tokens");
    if (r.max_tokens <= 0) fail("{}: max_tokens must be >= 1", wr);
    r.expected = num::Rational::parse_exact(rj.string("expected"), wr + " expected");
    if (!(r.expected == plan.expected.at(r.base_id))) {
      fail("{}: expected {} differs from base {}'s answer {}", wr, r.expected.str(), r.base_id,
           plan.expected.at(r.base_id).str());
    }
    r.answer_unit = rj.string("answer_unit");
    r.prompt = rj.string("prompt");
    if (!index.emplace(r.id, plan.requests.size()).second)
      fail("{}: request id {} is listed twice", wr, r.id);
    plan.requests.push_back(std::move(r));
  }
}

void read_plan_arms(const Record& j, Plan& plan, const std::map<std::string, std::size_t>& index) {
  const PlanOptions& opt = plan.options;
  const auto arms = j.objects("arms");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < arms.size(); ++i) {
    const Record& aj = arms[i];
    const std::string wa = fmt::format("{} arms[{}]", j.where(), i);
    ArmCalls a;
    a.tier = aj.string("tier");
    a.arm = aj.string("arm");
    a.base_id = aj.string("base_id");
    const auto allowed = tier_arms(a.tier);
    if (std::find(opt.tiers.begin(), opt.tiers.end(), a.tier) == opt.tiers.end() ||
        std::find(allowed.begin(), allowed.end(), a.arm) == allowed.end()) {
      fail("{}: arm '{}' is not part of tier '{}'", wa, a.arm, a.tier);
    }
    if (plan.expected.count(a.base_id) == 0) fail("{}: base {} is not in the plan's bases", wa, a.base_id);
    if (!seen.insert(a.tier + "/" + a.arm + "/" + a.base_id).second) {
      fail("{}: tier {} arm {} base {} is listed twice", wa, a.tier, a.arm, a.base_id);
    }
    const auto ids = aj.strings("requests");
    if (ids.size() != kCalls) fail("{}: an arm has exactly {} requests", wa, kCalls);
    for (std::size_t c = 0; c < kCalls; ++c) {
      auto it = index.find(ids[c]);
      if (it == index.end()) fail("{}: request {} is not in the plan", wa, ids[c]);
      const Request& r = plan.requests[it->second];
      if (r.base_id != a.base_id || r.tier != a.tier || r.seed_offset != c) {
        fail("{}: request {} does not belong to position {} of this arm", wa, ids[c], c);
      }
      a.requests[c] = it->second;
    }
    plan.arms.push_back(std::move(a));
  }
  // Every (tier, arm, base) must be present exactly once.
  for (const auto& t : opt.tiers) {
    for (const auto& arm : tier_arms(t)) {
      for (const auto& b : plan.bases) {
        if (seen.count(fmt::format("{}/{}/{}", t, arm, b)) == 0)
          fail("{}: tier {} arm {} has no calls for base {}", j.where(), t, arm, b);
      }
    }
  }
}

}  // namespace

Plan plan_from_json(const io::Json& json, std::string_view where) {
  const std::string w(where);
  if (!json.is_object()) fail("{}: a consensus plan must be a JSON object", w);
  const Record j = Record::of(json, w);
  if (j.string("kind") != kPlanKind) fail("{}: field 'kind' is not '{}'", w, kPlanKind);
  if (get_int(j, "version") != kPlanVersion) {
    fail("{}: plan version {} is not supported (expected {})", w, j.at("version").dump(), kPlanVersion);
  }
  Plan plan;
  const Record bench = j.object("benchmark");
  plan.benchmark_dir = bench.string("dir");
  for (auto& [k, v] : string_map(bench, "sha256")) plan.bench_sha256[k] = v;
  for (const char* key : {"generator_version", "prompt_version", "seed", "spec_sha256"}) {
    if (const io::Json* v = bench.find(key)) plan.bench_generator[key] = io::OrderedJson::parse(v->dump());
  }
  read_plan_options(j.object("options"), plan.options);
  read_plan_bases(j, plan);
  std::map<std::string, std::size_t> index;
  read_plan_requests(j, plan, index);
  read_plan_arms(j, plan, index);
  return plan;
}

void write_plan(const Plan& plan, const std::filesystem::path& path) {
  io::write_file_atomic(path, io::to_pretty(plan_to_json(plan)));
}

Plan read_plan(const std::filesystem::path& path) {
  const std::string text = io::read_file(path, std::size_t{1} << 30);
  return plan_from_json(io::parse_json(text, path.string()), path.string());
}

}  // namespace numcheck::consensus
