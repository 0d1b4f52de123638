#include "claims/load.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "claims/csv.hpp"
#include "core/ascii.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "io/json.hpp"

namespace numcheck::claims {

std::string_view category_name(Category c) noexcept {
  switch (c) {
    case Category::kStatistical:
      return "statistical";
    case Category::kTemporal:
      return "temporal";
    case Category::kInterval:
      return "interval";
    case Category::kComparison:
      return "comparison";
  }
  return "?";
}

std::optional<Category> category_from_name(std::string_view name) noexcept {
  const std::string n = normalize_label(name);
  for (Category c : kCategories)
    if (n == category_name(c)) return c;
  return std::nullopt;
}

std::string LoadIssue::str() const {
  std::string where = source;
  if (record > 0) where += fmt::format(": record {}", record);
  if (line > 0) where += fmt::format(" (line {})", line);
  return fmt::format("{}: {}{}", where, message, skipped ? " [record skipped]" : "");
}

bool split_features(std::string_view f, std::string& claim, std::string& doc) {
  constexpr std::string_view kClaim = "[Claim]:";
  constexpr std::string_view kEvid = "[Evidences]:";
  if (f.substr(0, kClaim.size()) != kClaim) return false;
  const std::size_t e = f.find(kEvid, kClaim.size());
  if (e == std::string_view::npos) {
    claim = std::string(f.substr(kClaim.size()));
    doc.clear();
    return true;
  }
  claim = std::string(f.substr(kClaim.size(), e - kClaim.size()));
  doc = std::string(f.substr(e + kEvid.size()));
  return true;
}

namespace {

using ascii::lower;
using ascii::trim;

std::vector<std::string> split_questions(std::string_view q) {
  std::vector<std::string> out;
  constexpr std::string_view kSep = "Next Question:";
  std::size_t start = 0;
  for (;;) {
    const std::size_t p = q.find(kSep, start);
    const std::string piece =
        std::string(trim(q.substr(start, p == std::string_view::npos ? std::string_view::npos : p - start)));
    if (!piece.empty()) out.push_back(piece);
    if (p == std::string_view::npos) break;
    start = p + kSep.size();
  }
  return out;
}

struct Ctx {
  std::string_view name;
  const LoadOptions& opt;
  const LabelMap& labels;
  LoadResult& out;
  void issue(std::size_t record, std::size_t line, std::string msg, bool skipped) {
    out.issues.push_back({std::string(name), record, line, std::move(msg), skipped});
  }
};

// Applies a label as written; returns false (after reporting) when the record must be skipped.
bool apply_label(Ctx& cx, Claim& c, const std::string& raw, std::size_t line) {
  const std::string t(trim(raw));
  if (t.empty()) {
    if (cx.opt.keep_unknown_labels && cx.opt.labels == LabelPolicy::kRequired) {
      cx.issue(c.record, line, "empty label (kept as unparseable)", false);
      c.label_original = "(empty)";
      return true;
    }
    if (cx.opt.labels == LabelPolicy::kRequired) {
      cx.issue(c.record, line, "empty label", true);
      return false;
    }
    return true;
  }
  const auto v = cx.labels.map(t);
  if (!v && cx.opt.keep_unknown_labels) {
    cx.issue(c.record, line, fmt::format("unknown label '{}' (kept as unparseable)", t), false);
    c.label_original = t;
    return true;
  }
  if (!v) {
    cx.issue(c.record, line, fmt::format("unknown label '{}'", t), true);
    return false;
  }
  c.label = v;
  if (c.label_original.empty()) c.label_original = t;
  return true;
}

void apply_category(Ctx& cx, Claim& c, const std::string& raw, std::size_t line) {
  if (trim(raw).empty()) return;
  const auto cat = category_from_name(raw);
  if (!cat) {
    cx.issue(c.record, line, fmt::format("unknown taxonomy label '{}' (category left unset)", trim(raw)),
             false);
    return;
  }
  c.category = cat;
}

// Final checks shared by all formats; returns false when the record must be skipped.
bool finish(Ctx& cx, Claim& c, std::size_t line) {
  if (c.text.empty() && (cx.opt.require_text || c.id.empty())) {
    cx.issue(c.record, line, cx.opt.require_text ? "no claim text" : "neither claim text nor id", true);
    return false;
  }
  if (!c.label && cx.opt.labels == LabelPolicy::kRequired &&
      !(cx.opt.keep_unknown_labels && !c.label_original.empty())) {
    cx.issue(c.record, line, "no label", true);
    return false;
  }
  return true;
}

// ---------------------------------------------------------------- JSON objects

bool string_field(Ctx& cx, const io::Json& o, const char* key, std::string& dst, std::size_t rec,
                  std::size_t line) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return true;
  if (it->is_array() &&
      std::all_of(it->begin(), it->end(), [](const io::Json& e) { return e.is_string(); })) {
    // Some files hold a list of names ("factchecker": ["Por María Pascual"]): joined with "; ".
    dst.clear();
    for (const auto& e : *it) dst += (dst.empty() ? "" : "; ") + e.get<std::string>();
    return true;
  }
  if (!it->is_string()) {
    cx.issue(rec, line, fmt::format("field '{}' is not a string (ignored)", key), false);
    return false;
  }
  dst = it->get<std::string>();
  return true;
}

// The "evidences" list of a CheckThat mapping record; false (after an issue) when it is malformed.
bool json_evidences(Ctx& cx, const io::Json& ev_list, std::size_t rec, std::size_t line, Claim& c) {
  if (!ev_list.is_array()) {
    cx.issue(rec, line, "field 'evidences' is not an array", true);
    return false;
  }
  std::size_t k = 0;
  for (const auto& e : ev_list) {
    ++k;
    if (!e.is_object()) {
      cx.issue(rec, line, fmt::format("evidences[{}] is not an object", k - 1), true);
      return false;
    }
    Evidence ev;
    if (auto q = e.find("questions"); q != e.end() && !q->is_null()) {
      if (!q->is_string()) {
        cx.issue(rec, line, fmt::format("evidences[{}].questions is not a string", k - 1), true);
        return false;
      }
      ev.questions = q->get<std::string>();
    }
    if (auto d = e.find("top_k_doc"); d != e.end() && !d->is_null()) {
      if (!d->is_array()) {
        cx.issue(rec, line, fmt::format("evidences[{}].top_k_doc is not an array", k - 1), true);
        return false;
      }
      for (const auto& s : *d) {
        if (!s.is_string()) {
          cx.issue(rec, line, fmt::format("evidences[{}].top_k_doc holds a non-string", k - 1), true);
          return false;
        }
        ev.top_k_doc.push_back(s.get<std::string>());
      }
    }
    c.evidences.push_back(std::move(ev));
  }
  return true;
}

void json_record(Ctx& cx, const io::Json& o, std::size_t rec, std::size_t line) {
  if (!o.is_object()) {
    cx.issue(rec, line, "not a JSON object", true);
    return;
  }
  Claim c;
  c.source = std::string(cx.name);
  c.record = rec;
  bool ok = true;
  if (auto it = o.find("claim"); it != o.end() && !it->is_null()) {
    if (!it->is_string()) {
      cx.issue(rec, line, "field 'claim' is not a string", true);
      return;
    }
    c.text = it->get<std::string>();
  }
  if (auto it = o.find("id"); it != o.end() && !it->is_null()) {
    if (it->is_string())
      c.id = it->get<std::string>();
    else if (it->is_number_integer())
      c.id = it->dump();
    else {
      cx.issue(rec, line, "field 'id' is neither a string nor an integer", true);
      return;
    }
  }
  string_field(cx, o, "label_original", c.label_original, rec, line);
  std::string label;
  if (auto it = o.find("label"); it != o.end() && !it->is_null()) {
    if (!it->is_string()) {
      cx.issue(rec, line, "field 'label' is not a string", true);
      return;
    }
    label = it->get<std::string>();
  } else if (!c.label_original.empty()) {
    label = c.label_original;
  }
  if (!apply_label(cx, c, label, line)) return;
  std::string tax;
  if (string_field(cx, o, "taxonomy_label", tax, rec, line)) apply_category(cx, c, tax, line);
  string_field(cx, o, "doc", c.doc, rec, line);
  string_field(cx, o, "url", c.url, rec, line);
  string_field(cx, o, "country_of_origin", c.country_of_origin, rec, line);
  string_field(cx, o, "crawled_date", c.crawled_date, rec, line);
  string_field(cx, o, "fact_source", c.fact_source, rec, line);
  string_field(cx, o, "factchecker", c.factchecker, rec, line);
  string_field(cx, o, "lang", c.lang, rec, line);
  if (auto it = o.find("numerical"); it != o.end() && !it->is_null()) {
    if (it->is_boolean())
      c.numerical = it->get<bool>();
    else
      cx.issue(rec, line, "field 'numerical' is not a boolean (ignored)", false);
  }
  if (auto it = o.find("evidences"); it != o.end() && !it->is_null()) {
    if (!json_evidences(cx, *it, rec, line, c)) return;
  }
  if (auto it = o.find("questions"); it != o.end() && it->is_string())
    c.questions = split_questions(it->get<std::string>());
  static constexpr const char* kKnown[] = {
      "claim",          "id",          "label",       "label_original",
      "taxonomy_label", "doc",         "url",         "country_of_origin",
      "crawled_date",   "fact_source", "factchecker", "lang",
      "numerical",      "evidences",   "questions"};
  for (auto it = o.begin(); it != o.end(); ++it) {
    if (std::find_if(std::begin(kKnown), std::end(kKnown), [&](const char* k) { return it.key() == k; }) !=
        std::end(kKnown))
      continue;
    c.extra.emplace_back(it.key(), it->is_string() ? it->get<std::string>() : io::to_line(*it));
  }
  if (!ok || !finish(cx, c, line)) return;
  cx.out.claims.push_back(std::move(c));
}

void parse_json_array(Ctx& cx, std::string_view bytes) {
  const io::Json j = io::parse_json(bytes, cx.name);
  if (!j.is_array()) fail("{}: expected a JSON array of claim objects", cx.name);
  bool mapping = false;
  std::size_t rec = 0;
  for (const auto& o : j) {
    ++rec;
    if (o.is_object() && o.contains("evidences")) mapping = true;
    json_record(cx, o, rec, 0);
  }
  cx.out.format = mapping ? "json:checkthat-mapping" : "json:quantemp";
}

// JSONL under io's rule (io/json.hpp): blank lines skipped; a malformed or torn line is an issue
// (the record is skipped) and loading goes on.
void parse_jsonl(Ctx& cx, std::string_view bytes) {
  cx.out.format = "jsonl";
  std::size_t rec = 0;
  io::JsonlOptions options;
  options.on_bad_line = [&](const io::JsonError& e, std::size_t line) {
    cx.issue(++rec, line, e.message, true);
  };
  (void)io::read_jsonl_text(
      bytes, cx.name, [&](const io::Record& o, std::size_t line) { json_record(cx, o.json(), ++rec, line); },
      options);
}

// ---------------------------------------------------------------- CSV

char detect_separator(std::string_view bytes) {
  std::size_t e = bytes.find('\n');
  std::string_view first = bytes.substr(0, e);
  auto has_claim_column = [&](char sep) {
    CsvReader r(first, sep);
    CsvRecord rec;
    std::string err;
    if (!r.next(rec, err)) return false;
    for (const auto& f : rec.fields) {
      const std::string n = lower(trim(f));
      if (n == "claim" || n == "claims" || n == "features" || n == "id") return true;
    }
    return false;
  };
  if (has_claim_column(',')) return ',';
  if (has_claim_column('@')) return '@';
  if (has_claim_column('\t')) return '\t';
  return ',';
}

enum class Col {
  kId,
  kText,
  kFeatures,
  kLabel,
  kLabelOriginal,
  kTaxonomy,
  kQuestions,
  kPred,
  kDoc,
  kUrl,
  kCountry,
  kDate,
  kFactSource,
  kFactChecker,
  kLang,
  kExtra
};

// A CSV column by its (lower-cased, trimmed) header name; an unnamed first column is the id.
Col column_of(const std::string& n, std::size_t i) {
  struct Named {
    const char* name;
    Col col;
  };
  static constexpr Named kColumns[] = {
      {"id", Col::kId},
      {"claim", Col::kText},
      {"claims", Col::kText},
      {"features", Col::kFeatures},
      {"label", Col::kLabel},
      {"true_label", Col::kLabel},
      {"verdict", Col::kLabel},
      {"label_original", Col::kLabelOriginal},
      {"taxonomy_label", Col::kTaxonomy},
      {"taxonomy_labels", Col::kTaxonomy},
      {"questions", Col::kQuestions},
      {"pred_label", Col::kPred},
      {"doc", Col::kDoc},
      {"url", Col::kUrl},
      {"country_of_origin", Col::kCountry},
      {"crawled_date", Col::kDate},
      {"fact_source", Col::kFactSource},
      {"factchecker", Col::kFactChecker},
      {"lang", Col::kLang},
  };
  if (n.empty() && i == 0) return Col::kId;
  for (const auto& c : kColumns)
    if (n == c.name) return c.col;
  return Col::kExtra;
}

// One CSV record as a claim (label and category applied); nullopt after an issue.
std::optional<Claim> csv_claim(Ctx& cx, const CsvTable& t, const CsvRecord& r, const std::vector<Col>& cols,
                               bool text_col) {
  Claim c;
  c.source = std::string(cx.name);
  c.record = r.number;
  std::string label;
  std::string tax;
  bool skip = false;
  for (std::size_t i = 0; i < cols.size() && !skip; ++i) {
    const std::string& f = r.fields[i];
    switch (cols[i]) {
      case Col::kId:
        c.id = trim(f);
        break;
      case Col::kText:
        c.text = f;
        break;
      case Col::kFeatures:
        if (text_col) {
          c.extra.emplace_back(t.header[i], f);
        } else {
          std::string doc;
          if (!split_features(f, c.text, doc)) {
            cx.issue(r.number, r.line, "'features' does not start with \"[Claim]:\"", true);
            skip = true;
          }
          c.doc = std::move(doc);
        }
        break;
      case Col::kLabel:
        label = f;
        break;
      case Col::kLabelOriginal:
        c.label_original = trim(f);
        break;
      case Col::kTaxonomy:
        tax = f;
        break;
      case Col::kQuestions:
        c.questions = split_questions(f);
        break;
      case Col::kPred:
        c.pred_label = trim(f);
        break;
      case Col::kDoc:
        c.doc = f;
        break;
      case Col::kUrl:
        c.url = f;
        break;
      case Col::kCountry:
        c.country_of_origin = f;
        break;
      case Col::kDate:
        c.crawled_date = f;
        break;
      case Col::kFactSource:
        c.fact_source = f;
        break;
      case Col::kFactChecker:
        c.factchecker = f;
        break;
      case Col::kLang:
        c.lang = f;
        break;
      case Col::kExtra:
        c.extra.emplace_back(t.header[i], f);
        break;
    }
  }
  if (skip) return std::nullopt;
  if (label.empty() && !c.label_original.empty()) label = c.label_original;
  if (!apply_label(cx, c, label, r.line)) return std::nullopt;
  apply_category(cx, c, tax, r.line);
  if (!finish(cx, c, r.line)) return std::nullopt;
  return c;
}

void parse_csv_claims(Ctx& cx, std::string_view bytes) {
  const char sep = detect_separator(bytes);
  cx.out.format = sep == '\t' ? "csv:tab" : fmt::format("csv:{}", sep);
  CsvTable t = parse_csv(bytes, sep);
  for (const auto& is : t.issues) cx.issue(is.record, is.line, is.message, true);
  std::vector<Col> cols;
  for (std::size_t i = 0; i < t.header.size(); ++i) cols.push_back(column_of(lower(trim(t.header[i])), i));
  const bool text_col = std::find(cols.begin(), cols.end(), Col::kText) != cols.end();
  const bool has_text = text_col || std::find(cols.begin(), cols.end(), Col::kFeatures) != cols.end();
  const bool has_id = std::find(cols.begin(), cols.end(), Col::kId) != cols.end();
  if (!t.header.empty() && !has_text && !(has_id && !cx.opt.require_text))
    fail("{}: line {}: no claim column (expected 'claim', 'claims' or 'features')", cx.name, t.header_line);
  for (const auto& r : t.records)
    if (auto c = csv_claim(cx, t, r, cols, text_col)) cx.out.claims.push_back(std::move(*c));
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && lower(s.substr(s.size() - suffix.size())) == suffix;
}

}  // namespace

LoadResult parse_claims(std::string_view bytes, std::string_view name, const LoadOptions& opt) {
  LoadResult out;
  Ctx cx{name, opt, opt.label_map != nullptr ? *opt.label_map : LabelMap::builtin(), out};
  ClaimFormat f = opt.format;
  if (f == ClaimFormat::kAuto) {
    if (ends_with(name, ".jsonl") || ends_with(name, ".ndjson"))
      f = ClaimFormat::kJsonl;
    else if (ends_with(name, ".json"))
      f = ClaimFormat::kJson;
    else if (ends_with(name, ".csv") || ends_with(name, ".tsv"))
      f = ClaimFormat::kCsv;
    else {
      const auto p = bytes.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
      if (p == std::string_view::npos) fail("{}: the file is empty", name);
      f = bytes[p] == '[' ? ClaimFormat::kJson : bytes[p] == '{' ? ClaimFormat::kJsonl : ClaimFormat::kCsv;
    }
  }
  switch (f) {
    case ClaimFormat::kJson:
      parse_json_array(cx, bytes);
      break;
    case ClaimFormat::kJsonl:
      parse_jsonl(cx, bytes);
      break;
    case ClaimFormat::kCsv:
    case ClaimFormat::kAuto:
      parse_csv_claims(cx, bytes);
      break;
  }
  return out;
}

LoadResult load_claims(const std::filesystem::path& path, const LoadOptions& opt) {
  const std::string bytes = io::read_file(path);
  return parse_claims(bytes, path.filename().string(), opt);
}

}  // namespace numcheck::claims
