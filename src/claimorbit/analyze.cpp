#include "claimorbit/analyze.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "claims/category.hpp"
#include "claims/csv.hpp"
#include "claims/labels.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "stats/bootstrap.hpp"
#include "stats/tests.hpp"

namespace numcheck::claimorbit {

namespace {

Verdicts read_csv(const std::filesystem::path& path) {
  const std::string text = io::read_file(path);
  const auto t = claims::parse_csv(text, ',');
  const std::string where = path.string();
  if (!t.issues.empty()) fail("{}:{}: {}", where, t.issues.front().line, t.issues.front().message);
  auto col = [&](std::string_view name) {
    const auto it = std::find(t.header.begin(), t.header.end(), name);
    if (it == t.header.end())
      fail("{}: no '{}' column (expected a header 'variant_id,verdict')", where, name);
    return static_cast<std::size_t>(it - t.header.begin());
  };
  const std::size_t ci = col("variant_id"), cv = col("verdict");
  Verdicts out;
  for (const auto& r : t.records) {
    const auto v = claims::LabelMap::builtin().map(r.fields[cv]);
    if (!v) fail("{}:{}: unknown verdict '{}'", where, r.line, r.fields[cv]);
    const auto [it, fresh] = out.emplace(r.fields[ci], *v);
    if (!fresh && it->second != *v)
      fail("{}:{}: two different verdicts for '{}'", where, r.line, r.fields[ci]);
  }
  return out;
}

Verdicts read_jsonl(const std::filesystem::path& path, std::size_t* unparseable) {
  Verdicts out;
  std::map<std::string, std::size_t> first_line;
  io::read_jsonl(path, [&](const io::Record& r, std::size_t line) {
    const std::string id = r.string("id");
    const auto label = r.opt_string("label");
    if (!label || *label == "unparseable") {
      if (unparseable != nullptr) ++*unparseable;
      return;
    }
    const auto v = claims::LabelMap::builtin().map(*label);
    if (!v) r.fail_field("label", fmt::format("unknown verdict '{}'", *label));
    const auto [it, fresh] = out.emplace(id, *v);
    if (!fresh && it->second != *v) fail("{}:{}: two different verdicts for '{}'", path.string(), line, id);
  });
  return out;
}

}  // namespace

Verdicts read_verdicts(const std::filesystem::path& path, std::size_t* unparseable) {
  if (path.extension() == ".jsonl") return read_jsonl(path, unparseable);
  return read_csv(path);
}

std::vector<claims::EvidenceRecord> orbit_evidence(
    const std::vector<ClaimOrbit>& orbits, const std::map<std::string, claims::EvidenceRecord>& evidence,
    std::size_t* without_evidence) {
  std::vector<claims::EvidenceRecord> records;
  for (const auto& o : orbits) {
    const auto it = evidence.find(o.id);
    if (it == evidence.end()) {
      if (without_evidence != nullptr) ++*without_evidence;
      continue;
    }
    claims::EvidenceRecord r = it->second;
    r.claim = o.claim;
    records.push_back(r);
    for (const auto& v : o.variants) {
      r.id = v.id;
      r.claim = v.text;
      records.push_back(r);
    }
  }
  return records;
}

namespace {

struct Pair {
  std::size_t cluster = 0;  // claim index among scored claims
  claims::Verdict original{}, variant{};
  std::optional<claims::Verdict> gold;
};

PairStats pair_stats(const std::vector<Pair>& pairs, std::size_t n_clusters, const AnalyzeOptions& opt) {
  PairStats s;
  s.pairs = pairs.size();
  std::vector<bool> seen(n_clusters, false);
  // Per cluster: gold pairs, and correct counts on each side (for the clustered bootstrap).
  std::vector<std::array<std::uint32_t, 3>> per(n_clusters, {0, 0, 0});
  for (const auto& p : pairs) {
    if (!seen[p.cluster]) {
      seen[p.cluster] = true;
      ++s.claims;
    }
    if (p.original == p.variant) {
      ++s.invariant;
    } else {
      ++s.flips[fmt::format("{}->{}", claims::verdict_name(p.original), claims::verdict_name(p.variant))];
    }
    if (p.gold) {
      const bool oc = p.original == *p.gold, vc = p.variant == *p.gold;
      ++s.gold_pairs;
      s.original_correct += oc;
      s.variant_correct += vc;
      s.original_only_correct += oc && !vc;
      s.variant_only_correct += vc && !oc;
      per[p.cluster][0] += 1;
      per[p.cluster][1] += oc;
      per[p.cluster][2] += vc;
    }
  }
  s.invariance_ci = stats::wilson(s.invariant, s.pairs);
  if (s.gold_pairs > 0) {
    s.accuracy_original = double(s.original_correct) / double(s.gold_pairs);
    s.accuracy_variant = double(s.variant_correct) / double(s.gold_pairs);
    s.mcnemar_p = stats::mcnemar_exact_p(s.original_only_correct, s.variant_only_correct);
    std::vector<std::size_t> clusters;  // clusters that hold gold pairs
    for (std::size_t c = 0; c < n_clusters; ++c)
      if (per[c][0] > 0) clusters.push_back(c);
    if (opt.draws > 0) {
      const auto reps =
          stats::bootstrap_counts(clusters.size(), opt.draws, opt.seed, [&](const stats::ClusterCounts& k) {
            double n = 0, o = 0, v = 0;
            for (std::size_t i = 0; i < clusters.size(); ++i) {
              const auto& q = per[clusters[i]];
              n += double(k[i]) * q[0];
              o += double(k[i]) * q[1];
              v += double(k[i]) * q[2];
            }
            return n > 0 ? (v - o) / n : 0.0;
          });
      s.diff_ci = stats::percentile_interval(reps);
    }
  }
  return s;
}

io::OrderedJson pair_json(const PairStats& s) {
  io::OrderedJson j;
  j["pairs"] = s.pairs;
  j["claims"] = s.claims;
  j["invariant"] = s.invariant;
  j["invariance"] = s.invariance();
  j["invariance_wilson95"] = {s.invariance_ci.lo, s.invariance_ci.hi};
  j["flips"] = io::OrderedJson::object();
  for (const auto& [k, v] : s.flips) j["flips"][k] = v;
  if (s.gold_pairs > 0) {
    j["gold_pairs"] = s.gold_pairs;
    j["original_correct"] = s.original_correct;
    j["variant_correct"] = s.variant_correct;
    j["accuracy_original"] = s.accuracy_original;
    j["accuracy_variant"] = s.accuracy_variant;
    j["accuracy_diff"] = s.accuracy_variant - s.accuracy_original;
    j["accuracy_diff_bootstrap95"] = {s.diff_ci.lo, s.diff_ci.hi};
    j["mcnemar"] = {{"original_only_correct", s.original_only_correct},
                    {"variant_only_correct", s.variant_only_correct},
                    {"p", s.mcnemar_p}};
  } else {
    j["gold_pairs"] = 0;
  }
  return j;
}

}  // namespace

OrbitAnalysis analyze(const std::vector<ClaimOrbit>& orbits, const Verdicts& verdicts,
                      const std::map<std::string, claims::Verdict>& gold,
                      const std::map<std::string, claims::Category>& categories, const AnalyzeOptions& opt,
                      std::string system) {
  OrbitAnalysis a;
  a.system = std::move(system);
  a.draws = opt.draws;
  a.seed = opt.seed;
  a.claims = orbits.size();
  std::vector<std::string> form_order;
  std::map<std::string, std::vector<Pair>> by_form, by_cat;
  std::vector<Pair> all;
  std::size_t cluster = 0;
  for (const auto& o : orbits) {
    if (o.variants.empty()) continue;
    ++a.claims_with_variants;
    const auto orig = verdicts.find(o.id);
    if (orig == verdicts.end()) {
      ++a.missing_original;
      a.missing_variants += o.variants.size();
      continue;
    }
    std::optional<claims::Verdict> g;
    if (auto it = gold.find(o.id); it != gold.end()) g = it->second;
    claims::Category cat{};
    if (auto it = categories.find(o.id); it != categories.end())
      cat = it->second;
    else
      cat = claims::categorize(o.claim).category;
    bool any = false, agree = true;
    for (const auto& v : o.variants) {
      const auto vv = verdicts.find(v.id);
      if (vv == verdicts.end()) {
        ++a.missing_variants;
        continue;
      }
      any = true;
      const Pair p{cluster, orig->second, vv->second, g};
      if (std::find(form_order.begin(), form_order.end(), v.form) == form_order.end())
        form_order.push_back(v.form);
      by_form[v.form].push_back(p);
      by_cat[std::string(claims::category_name(cat))].push_back(p);
      all.push_back(p);
      if (p.original != p.variant) {
        agree = false;
        if (a.examples.size() < opt.max_examples)
          a.examples.push_back({o.id, v.form, o.claim, v.text, v.spans, p.original, p.variant, g});
      }
    }
    if (!any) continue;
    ++cluster;
    ++a.orbits;
    a.orbits_invariant += agree;
  }
  a.scored_claims = cluster;
  // Forms in the spec's order first, then any other.
  const auto& spec_forms = FormSpec::builtin().forms;
  std::stable_sort(form_order.begin(), form_order.end(), [&](const std::string& x, const std::string& y) {
    auto rank = [&](const std::string& f) {
      return static_cast<std::size_t>(std::find(spec_forms.begin(), spec_forms.end(), f) -
                                      spec_forms.begin());
    };
    return rank(x) < rank(y);
  });
  for (const auto& f : form_order) a.by_form.emplace_back(f, pair_stats(by_form[f], cluster, opt));
  a.all = pair_stats(all, cluster, opt);
  for (const auto& [c, ps] : by_cat) a.by_category[c] = pair_stats(ps, cluster, opt);
  a.orbit_invariance_ci = stats::wilson(a.orbits_invariant, a.orbits);
  return a;
}

io::OrderedJson analysis_json(const OrbitAnalysis& a) {
  io::OrderedJson j;
  j["system"] = a.system;
  j["claims"] = a.claims;
  j["claims_with_variants"] = a.claims_with_variants;
  j["scored_claims"] = a.scored_claims;
  j["missing_original"] = a.missing_original;
  j["missing_variants"] = a.missing_variants;
  j["orbit_invariance"] = {{"orbits", a.orbits},
                           {"invariant", a.orbits_invariant},
                           {"share", a.orbits > 0 ? double(a.orbits_invariant) / double(a.orbits) : 0.0},
                           {"wilson95", {a.orbit_invariance_ci.lo, a.orbit_invariance_ci.hi}}};
  j["all_forms"] = pair_json(a.all);
  j["forms"] = io::OrderedJson::object();
  for (const auto& [f, s] : a.by_form) j["forms"][f] = pair_json(s);
  j["categories"] = io::OrderedJson::object();
  for (const auto& [c, s] : a.by_category) j["categories"][c] = pair_json(s);
  j["examples"] = io::OrderedJson::array();
  for (const auto& e : a.examples) {
    io::OrderedJson x;
    x["claim_id"] = e.claim_id;
    x["form"] = e.form;
    x["claim"] = e.claim;
    x["variant"] = e.variant_text;
    x["spans"] = io::OrderedJson::array();
    for (const auto& s : e.spans)
      x["spans"].push_back({{"begin", s.begin}, {"end", s.end}, {"original", s.original}});
    x["original_verdict"] = claims::verdict_name(e.original);
    x["variant_verdict"] = claims::verdict_name(e.variant);
    x["gold"] = e.gold ? io::OrderedJson(claims::verdict_name(*e.gold)) : io::OrderedJson(nullptr);
    j["examples"].push_back(std::move(x));
  }
  j["bootstrap"] = {{"draws", a.draws}, {"seed", a.seed}, {"clusters", "claims"}};
  return j;
}

namespace {

claims::Verdict verdict_field(const io::Record& r, std::string_view key) {
  const std::string name = r.string(key);
  for (claims::Verdict v : claims::kVerdicts)
    if (claims::verdict_name(v) == name) return v;
  r.fail_field(key, fmt::format("'{}' is not True, False or Conflicting", name));
}

stats::Interval interval_field(const io::Record& r, std::string_view key) {
  const auto& a = r.array(key);
  if (a.size() != 2 || !a[0].is_number() || !a[1].is_number()) r.fail_field(key, "must be [lo, hi]");
  return {a[0].get<double>(), a[1].get<double>()};
}

std::size_t count(const io::Record& r, std::string_view key) {
  return static_cast<std::size_t>(r.unsigned_integer(key));
}

PairStats pair_from_json(const io::Record& r) {
  PairStats s;
  s.pairs = count(r, "pairs");
  s.claims = count(r, "claims");
  s.invariant = count(r, "invariant");
  if (s.invariant > s.pairs) r.fail_field("invariant", "exceeds pairs");
  s.invariance_ci = interval_field(r, "invariance_wilson95");
  const auto flips = r.object("flips");
  for (const auto& [k, v] : flips.json().items()) s.flips[k] = count(flips, k);
  s.gold_pairs = count(r, "gold_pairs");
  if (s.gold_pairs > 0) {
    s.original_correct = count(r, "original_correct");
    s.variant_correct = count(r, "variant_correct");
    s.accuracy_original = r.number("accuracy_original");
    s.accuracy_variant = r.number("accuracy_variant");
    s.diff_ci = interval_field(r, "accuracy_diff_bootstrap95");
    const auto m = r.object("mcnemar");
    s.original_only_correct = count(m, "original_only_correct");
    s.variant_only_correct = count(m, "variant_only_correct");
    s.mcnemar_p = m.number("p");
  }
  return s;
}

}  // namespace

OrbitAnalysis analysis_from_json(const io::Json& j, std::string_view where) {
  const auto r = io::Record::of(j, where);
  OrbitAnalysis a;
  a.system = r.string("system");
  a.claims = count(r, "claims");
  a.claims_with_variants = count(r, "claims_with_variants");
  a.scored_claims = count(r, "scored_claims");
  a.missing_original = count(r, "missing_original");
  a.missing_variants = count(r, "missing_variants");
  const auto oi = r.object("orbit_invariance");
  a.orbits = count(oi, "orbits");
  a.orbits_invariant = count(oi, "invariant");
  if (a.orbits_invariant > a.orbits) oi.fail_field("invariant", "exceeds orbits");
  a.orbit_invariance_ci = interval_field(oi, "wilson95");
  a.all = pair_from_json(r.object("all_forms"));
  const auto forms = r.object("forms");
  for (const auto& [f, v] : forms.json().items()) a.by_form.emplace_back(f, pair_from_json(forms.object(f)));
  // JSON objects come back with sorted keys: restore the forms' order (the spec's, then any other).
  const auto& spec_forms = FormSpec::builtin().forms;
  std::stable_sort(a.by_form.begin(), a.by_form.end(), [&](const auto& x, const auto& y) {
    auto rank = [&](const std::string& f) {
      return std::find(spec_forms.begin(), spec_forms.end(), f) - spec_forms.begin();
    };
    return rank(x.first) < rank(y.first);
  });
  const auto cats = r.object("categories");
  for (const auto& [c, v] : cats.json().items()) a.by_category[c] = pair_from_json(cats.object(c));
  for (const auto& e : r.objects("examples")) {
    Flip f;
    f.claim_id = e.string("claim_id");
    f.form = e.string("form");
    f.claim = e.string("claim");
    f.variant_text = e.string("variant");
    for (const auto& sp : e.objects("spans")) {
      Span s;
      s.begin = count(sp, "begin");
      s.end = count(sp, "end");
      if (s.begin > s.end || s.end > f.variant_text.size())
        sp.fail_field("end", "span outside the variant text");
      s.original = sp.string("original");
      f.spans.push_back(std::move(s));
    }
    f.original = verdict_field(e, "original_verdict");
    f.variant = verdict_field(e, "variant_verdict");
    if (e.has("gold")) f.gold = verdict_field(e, "gold");
    a.examples.push_back(std::move(f));
  }
  const auto b = r.object("bootstrap");
  a.draws = count(b, "draws");
  a.seed = b.unsigned_integer("seed");
  return a;
}

}  // namespace numcheck::claimorbit
