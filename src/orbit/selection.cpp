#include "orbit/selection.hpp"

#include "core/ascii.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

#include "core/error.hpp"
#include "core/prng.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"
#include "num/rational.hpp"

namespace numcheck::orbit {

namespace {

using OJ = io::OrderedJson;

bool is_paraphrase(std::string_view view) { return view.rfind("paraphrase", 0) == 0; }

// Base ids of a file: one per line, blank lines and '#' comments ignored.
std::vector<std::string> read_base_ids(const std::filesystem::path& file, const Benchmark& bench) {
  std::vector<std::string> ids;
  std::set<std::string> seen;
  io::for_each_line(file, [&](const io::Line& line) {
    std::string_view t = line.text;
    if (auto hash = t.find('#'); hash != std::string_view::npos) t = t.substr(0, hash);
    std::string id(ascii::trim(t));
    if (id.empty()) return;
    if (bench.find_base(id) == nullptr) {
      fail(ErrorCode::kUsage, "--base-ids {}:{}: the benchmark has no base '{}'", file.string(), line.number,
           id);
    }
    if (seen.insert(id).second) ids.push_back(std::move(id));
  });
  return ids;
}

OJ selection_record(const Selection& s, std::size_t of_bases, std::size_t bases, std::size_t prompts) {
  OJ j = OJ::object();
  j["spec"] = s.spec;
  j["bases"] = bases;
  j["of_bases"] = of_bases;
  j["views"] = s.views;
  j["prompts"] = prompts;
  j["base_ids"] = s.all_bases ? OJ("all") : OJ(s.base_ids);
  return j;
}

}  // namespace

std::vector<std::size_t> allocate_seats(const std::vector<std::size_t>& sizes, std::size_t n) {
  std::vector<std::size_t> seats(sizes.size(), 0);
  std::size_t total = 0;
  for (auto s : sizes) total += s;
  n = std::min(n, total);
  for (std::size_t seat = 0; seat < n; ++seat) {
    // Highest priority size / sqrt(k (k + 1)); k = 0 is infinite priority. Compared exactly as
    // size_a^2 * k_b (k_b + 1) > size_b^2 * k_a (k_a + 1); ties go to the earlier group.
    std::size_t best = sizes.size();
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (seats[i] >= sizes[i]) continue;
      if (best == sizes.size()) {
        best = i;
        continue;
      }
      const auto ki = static_cast<long long>(seats[i]);
      const auto kb = static_cast<long long>(seats[best]);
      if (kb == 0) continue;  // best already has infinite priority (earlier group wins ties)
      if (ki == 0) {
        best = i;
        continue;
      }
      const num::Rational si(static_cast<long long>(sizes[i]));
      const num::Rational sb(static_cast<long long>(sizes[best]));
      if (si * si * num::Rational(kb * (kb + 1)) > sb * sb * num::Rational(ki * (ki + 1))) best = i;
    }
    ++seats[best];
  }
  return seats;
}

namespace {

// --bases N: a stratified sample of whole orbits, seats over the templates in proportion to their
// bases in `pool` (largest remainder), each template's members shuffled by its own stream of the
// seed (--seed, else the benchmark's generation seed); keeps the chosen ones in `pool` and returns
// the seed.
std::uint64_t sample_bases(const Benchmark& bench, const SelectionSpec& spec, std::size_t n,
                           std::vector<const Base*>& pool) {
  std::vector<std::string> order;  // templates in order of first appearance
  std::map<std::string, std::vector<const Base*>> by_template;
  for (const Base* b : pool) {
    if (by_template.find(b->template_id) == by_template.end()) order.push_back(b->template_id);
    by_template[b->template_id].push_back(b);
  }
  std::vector<std::size_t> sizes;
  sizes.reserve(order.size());
  for (const auto& t : order) sizes.push_back(by_template[t].size());
  const auto seats = allocate_seats(sizes, n);
  std::uint64_t seed = 20260725;
  if (spec.seed) {
    seed = *spec.seed;
  } else {
    const io::Json m = io::Json::parse(bench.manifest_json, nullptr, false);
    if (m.is_object() && m.contains("seed") && m["seed"].is_number_unsigned())
      seed = m["seed"].get<std::uint64_t>();
  }
  std::unordered_set<const Base*> chosen;
  for (std::size_t i = 0; i < order.size(); ++i) {
    auto members = by_template[order[i]];
    Rng rng(seed, "selection:" + order[i]);
    rng.shuffle(members);
    for (std::size_t k = 0; k < seats[i]; ++k) chosen.insert(members[k]);
  }
  std::erase_if(pool, [&](const Base* b) { return chosen.count(b) == 0; });
  return seed;
}

}  // namespace

Selection select(const Benchmark& bench, const SelectionSpec& spec) {
  Selection s;
  OJ rec = OJ::object();

  // Views.
  std::vector<std::string> known_views;
  for (const auto& v : bench.views) {
    if (std::find(known_views.begin(), known_views.end(), v.view) == known_views.end())
      known_views.push_back(v.view);
  }
  const bool all_views = spec.views.size() == 1 && spec.views[0] == "all";
  if (spec.views.empty() || all_views) {
    for (const auto& v : known_views) {
      if (all_views || !is_paraphrase(v)) s.views.push_back(v);
    }
    s.default_views = !all_views;
    rec["views"] = all_views ? OJ("all") : OJ("default");
  } else {
    std::set<std::string> wanted(spec.views.begin(), spec.views.end());
    for (const auto& w : wanted) {
      if (std::find(known_views.begin(), known_views.end(), w) == known_views.end()) {
        fail(ErrorCode::kUsage, "--views: the benchmark has no view '{}'", w);
      }
    }
    if (wanted.count("canonical") == 0) {
      fail(ErrorCode::kUsage,
           "--views must include canonical: every orbit metric (gaps, orbit correctness) is relative to it");
    }
    for (const auto& v : known_views) {
      if (wanted.count(v)) s.views.push_back(v);
    }
    // Exactly the default views, named one by one, is still the default.
    std::vector<std::string> defaults;
    for (const auto& v : known_views) {
      if (!is_paraphrase(v)) defaults.push_back(v);
    }
    s.default_views = s.views == defaults;
    rec["views"] = s.views;
  }

  // Bases: file, then templates, then the stratified sample.
  std::vector<const Base*> pool;
  for (const auto& b : bench.bases) pool.push_back(&b);
  if (spec.base_ids_file) {
    const auto ids = read_base_ids(*spec.base_ids_file, bench);
    const std::unordered_set<std::string> keep(ids.begin(), ids.end());
    std::erase_if(pool, [&](const Base* b) { return keep.count(b->base_id) == 0; });
    OJ f = OJ::object();
    f["path"] = spec.base_ids_file->filename().string();
    f["sha256"] = io::sha256_file(*spec.base_ids_file);
    f["ids"] = ids.size();
    rec["base_ids_file"] = f;
  } else {
    rec["base_ids_file"] = nullptr;
  }
  if (!spec.templates.empty()) {
    std::set<std::string> known;
    for (const auto& b : bench.bases) known.insert(b.template_id);
    for (const auto& t : spec.templates) {
      if (known.count(t) == 0) fail(ErrorCode::kUsage, "--templates: the benchmark has no template '{}'", t);
    }
    const std::set<std::string> keep(spec.templates.begin(), spec.templates.end());
    std::erase_if(pool, [&](const Base* b) { return keep.count(b->template_id) == 0; });
    rec["templates"] = std::vector<std::string>(keep.begin(), keep.end());
  } else {
    rec["templates"] = "all";
  }
  if (spec.bases) {
    if (*spec.bases == 0) fail(ErrorCode::kUsage, "--bases must be at least 1");
    const std::uint64_t seed = sample_bases(bench, spec, *spec.bases, pool);
    rec["bases"] = *spec.bases;
    rec["seed"] = seed;
  } else {
    rec["bases"] = nullptr;
  }
  s.all_bases = pool.size() == bench.bases.size();
  for (const Base* b : pool) s.base_ids.push_back(b->base_id);
  if (s.base_ids.empty()) fail(ErrorCode::kUsage, "no bases selected (check --templates and --base-ids)");
  s.spec = std::move(rec);
  return s;
}

bool selected(const Selection& s, const View& v) {
  return std::find(s.views.begin(), s.views.end(), v.view) != s.views.end() &&
         (s.all_bases || std::find(s.base_ids.begin(), s.base_ids.end(), v.base_id) != s.base_ids.end());
}

namespace {

// restrict's rule on a benchmark: the bases `s` selects (indexes, benchmark order) and the views it
// keeps (a selected view name of a selected base, benchmark order).
struct Chosen {
  std::vector<std::size_t> bases;
  std::vector<const View*> views;
};

Chosen choose(const Benchmark& bench, const Selection& s) {
  Chosen c;
  std::unordered_set<std::string_view> ids;  // not needed (nor built) when every base is selected
  if (!s.all_bases) ids.insert(s.base_ids.begin(), s.base_ids.end());
  const std::set<std::string, std::less<>> views(s.views.begin(), s.views.end());
  std::vector<char> kept(bench.bases.size(), 0);
  c.bases.reserve(bench.bases.size());
  for (std::size_t b = 0; b < bench.bases.size(); ++b) {
    if (!s.all_bases && ids.count(bench.bases[b].base_id) == 0) continue;
    kept[b] = 1;
    c.bases.push_back(b);
  }
  // A base's views follow one another in a generated benchmark: the previous view's base (and
  // whether it was kept) is reused instead of looked up again.
  std::string_view last_base;
  bool last_kept = false;
  bool have_last = false;
  for (const auto& v : bench.views) {
    if (views.count(v.view) == 0) continue;
    if (!have_last || v.base_id != last_base) {
      const auto b = bench.base_position(v.base_id);
      last_base = v.base_id;
      last_kept = b && kept[*b] != 0;
      have_last = true;
    }
    if (last_kept) c.views.push_back(&v);
  }
  return c;
}

}  // namespace

OJ to_json(const Selection& s, const Benchmark& bench) {
  const Chosen c = choose(bench, s);
  return selection_record(s, bench.bases.size(), c.bases.size(), c.views.size());
}

std::vector<const View*> selected_views(const Benchmark& bench, const Selection& s) {
  return choose(bench, s).views;
}

AskedViews asked_views(const Benchmark& bench, const Selection& s) {
  Chosen c = choose(bench, s);
  AskedViews a;
  a.record = selection_record(s, bench.bases.size(), c.bases.size(), c.views.size());
  a.views = std::move(c.views);
  return a;
}

namespace {

// selection_from_json on what it needs of a benchmark: its distinct view names in order of first
// appearance, its base ids in order, and a lookup.
template <typename AllBases, typename HasBase>
Selection selection_from_parts(const OJ& j, const std::vector<std::string>& view_names,
                               std::size_t base_count, const AllBases& all_bases, const HasBase& has_base,
                               const std::string& where) {
  if (!j.is_object() || !j.contains("views") || !j["views"].is_array() || !j.contains("base_ids")) {
    fail("{}: 'selection' must be an object with 'views' and 'base_ids'", where);
  }
  Selection s;
  s.spec = j.value("spec", OJ::object());
  const std::set<std::string> known_views(view_names.begin(), view_names.end());
  for (const auto& v : j["views"]) {
    if (!v.is_string() || known_views.count(v.get<std::string>()) == 0) {
      fail("{}: selection view {} is not a view of the benchmark", where, v.dump());
    }
    s.views.push_back(v.get<std::string>());
  }
  std::vector<std::string> defaults;
  for (const auto& v : view_names) {
    if (!is_paraphrase(v)) defaults.push_back(v);
  }
  s.default_views = s.views == defaults;
  const OJ& ids = j["base_ids"];
  if (ids.is_string() && ids.get<std::string>() == "all") {
    all_bases(s.base_ids);
    s.all_bases = true;
  } else if (ids.is_array()) {
    for (const auto& id : ids) {
      if (!id.is_string() || !has_base(id.get<std::string>())) {
        fail("{}: selection base {} is not a base of the benchmark", where, id.dump());
      }
      s.base_ids.push_back(id.get<std::string>());
    }
    s.all_bases = s.base_ids.size() == base_count;
  } else {
    fail("{}: selection 'base_ids' must be \"all\" or a list of base ids", where);
  }
  return s;
}

// The selection run.json records next to `responses`, unread: nullopt when there is none.
std::optional<OJ> recorded_selection(const std::filesystem::path& responses, std::string& where) {
  const auto run_json = responses.parent_path() / "run.json";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(run_json, ec)) return std::nullopt;
  OJ j = io::parse_ordered_json(io::read_file(run_json, std::size_t{1} << 28), run_json.string());
  if (!j.is_object() || !j.contains("selection") || j.value("kind", std::string()) != "orbit run") {
    return std::nullopt;
  }
  OJ& sel = j["selection"];
  if (!sel.is_object() || !sel.contains("base_ids")) return std::nullopt;  // written before selections
  where = run_json.string() + ": selection";
  return std::move(sel);
}

}  // namespace

Selection selection_from_json(const OJ& j, const Benchmark& bench, const std::string& where) {
  std::vector<std::string> view_names;
  {
    std::set<std::string> seen;
    for (const auto& v : bench.views) {
      if (seen.insert(v.view).second) view_names.push_back(v.view);
    }
  }
  return selection_from_parts(
      j, view_names, bench.bases.size(),
      [&](std::vector<std::string>& out) {
        for (const auto& b : bench.bases) out.push_back(b.base_id);
      },
      [&](const std::string& id) { return bench.find_base(id) != nullptr; }, where);
}

Selection selection_from_json(const OJ& j, const BenchmarkIndex& bench, const std::string& where) {
  // "all" stays all_bases with no list: a copy of every base id (13 MB at a million prompts) that
  // restrict and whole() never read, held while `orbit score` grades.
  return selection_from_parts(
      j, bench.view_names(), bench.base_count(), [](std::vector<std::string>&) {},
      [&](const std::string& id) { return bench.has_base(id); }, where);
}

std::optional<Selection> run_selection(const std::filesystem::path& responses, const Benchmark& bench) {
  std::string where;
  const auto sel = recorded_selection(responses, where);
  if (!sel) return std::nullopt;
  return selection_from_json(*sel, bench, where);
}

std::optional<Selection> run_selection(const std::filesystem::path& responses, const BenchmarkIndex& bench) {
  std::string where;
  const auto sel = recorded_selection(responses, where);
  if (!sel) return std::nullopt;
  return selection_from_json(*sel, bench, where);
}

Benchmark restrict(const Benchmark& bench, const Selection& s) {
  Benchmark r;
  r.dir = bench.dir;
  r.manifest_json = bench.manifest_json;
  r.file_sha256 = bench.file_sha256;
  const Chosen c = choose(bench, s);
  const std::set<std::string, std::less<>> views(s.views.begin(), s.views.end());
  r.bases.reserve(c.bases.size());
  for (const std::size_t b : c.bases) {
    Base copy = bench.bases[b];
    std::erase_if(copy.views, [&](const std::string& v) { return views.count(v) == 0; });
    r.bases.push_back(std::move(copy));
  }
  r.views.reserve(c.views.size());
  for (const View* v : c.views) r.views.push_back(*v);
  r.reindex();
  if (!s.whole()) r.selection = selection_record(s, bench.bases.size(), r.bases.size(), r.views.size());
  return r;
}

BenchmarkIndex restrict(const BenchmarkIndex& bench, const Selection& s) {
  BenchmarkIndex r;
  r.dir = bench.dir;
  r.manifest_json = bench.manifest_json;
  r.file_sha256 = bench.file_sha256;
  r.cache_check = bench.cache_check;
  const std::unordered_set<std::string_view> bases(s.base_ids.begin(), s.base_ids.end());
  const std::set<std::string, std::less<>> views(s.views.begin(), s.views.end());
  for (std::size_t b = 0; b < bench.base_count(); ++b) {
    if (s.all_bases || bases.count(bench.base_at(b)) != 0) r.add_base(bench.base_at(b));
  }
  for (std::size_t i = 0; i < bench.size(); ++i) {
    if (views.count(bench.view(i)) == 0 || !r.has_base(bench.base_id(i))) continue;
    r.add_view(bench.prompt_id(i), bench.view(i), bench.family(i), bench.template_id(i), bench.expected(i),
               bench.answer_unit(i));
  }
  r.finish();
  if (!s.whole()) r.selection = selection_record(s, bench.base_count(), r.base_count(), r.size());
  return r;
}

}  // namespace numcheck::orbit
