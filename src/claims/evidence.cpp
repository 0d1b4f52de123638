#include "claims/evidence.hpp"

#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/version.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"

namespace numcheck::claims {
namespace fs = std::filesystem;

bool valid_selection(std::string_view s) noexcept {
  constexpr std::string_view kEmb = "embeddings:";
  if (s.substr(0, kEmb.size()) == kEmb) return s.size() > kEmb.size();
  return s == "lexical" || s == "claim-top3" || s == "val-top3" || s == "gold";
}

std::string claim_id(const Claim& c) {
  if (!c.id.empty()) return c.id;
  return fmt::format("{}:{}", fs::path(c.source).stem().string(), c.record);
}

io::OrderedJson evidence_json(const EvidenceRecord& r) {
  io::OrderedJson j;
  j["id"] = r.id;
  j["claim"] = r.claim;
  if (r.label) j["label"] = std::string(verdict_name(*r.label));
  if (r.category) j["category"] = std::string(category_name(*r.category));
  j["questions"] = r.questions;
  io::OrderedJson ev = io::OrderedJson::array();
  for (const auto& d : r.evidence) {
    io::OrderedJson e;
    e["doc_id"] = d.doc_id;
    e["text"] = d.text;
    if (!d.query.empty()) e["query"] = d.query;
    if (d.score) e["score"] = *d.score;
    if (d.rank) e["rank"] = *d.rank;
    ev.push_back(std::move(e));
  }
  j["evidence"] = std::move(ev);
  j["selection"] = r.selection;
  return j;
}

namespace {

const io::Json* optional_field(const io::Json& j, std::string_view key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string string_at(const io::Json& v, std::string_view where, std::string_view field) {
  if (!v.is_string()) fail("{}: field '{}' is not a string", where, field);
  return v.get<std::string>();
}

}  // namespace

EvidenceRecord evidence_from_json(const io::Json& j, std::string_view where) {
  if (!j.is_object()) fail("{}: not a JSON object", where);
  EvidenceRecord r;
  r.id = string_at(io::require(j, "id", where), where, "id");
  if (r.id.empty()) fail("{}: field 'id' is empty", where);
  r.claim = string_at(io::require(j, "claim", where), where, "claim");
  if (const auto* v = optional_field(j, "label")) {
    const std::string s = string_at(*v, where, "label");
    r.label = LabelMap::builtin().map(s);
    if (!r.label) fail("{}: field 'label': unknown label '{}'", where, s);
  }
  if (const auto* v = optional_field(j, "category")) {
    const std::string s = string_at(*v, where, "category");
    r.category = category_from_name(s);
    if (!r.category) fail("{}: field 'category': unknown category '{}'", where, s);
  }
  if (const auto* v = optional_field(j, "questions")) {
    if (!v->is_array()) fail("{}: field 'questions' is not an array", where);
    for (std::size_t i = 0; i < v->size(); ++i)
      r.questions.push_back(string_at((*v)[i], where, fmt::format("questions[{}]", i)));
  }
  const auto& ev = io::require(j, "evidence", where);
  if (!ev.is_array()) fail("{}: field 'evidence' is not an array", where);
  for (std::size_t i = 0; i < ev.size(); ++i) {
    const auto& e = ev[i];
    const std::string f = fmt::format("evidence[{}]", i);
    if (!e.is_object()) fail("{}: field '{}' is not an object", where, f);
    EvidenceDoc d;
    const auto id = e.find("doc_id");
    if (id == e.end()) fail("{}: field '{}.doc_id' is missing", where, f);
    d.doc_id = string_at(*id, where, f + ".doc_id");
    const auto text = e.find("text");
    if (text == e.end()) fail("{}: field '{}.text' is missing", where, f);
    d.text = string_at(*text, where, f + ".text");
    if (const auto* q = optional_field(e, "query")) d.query = string_at(*q, where, f + ".query");
    if (const auto* s = optional_field(e, "score")) {
      if (!s->is_number()) fail("{}: field '{}.score' is not a number", where, f);
      d.score = s->get<double>();
    }
    if (const auto* k = optional_field(e, "rank")) {
      if (!k->is_number_unsigned() || k->get<std::size_t>() == 0)
        fail("{}: field '{}.rank' is not a positive integer", where, f);
      d.rank = k->get<std::size_t>();
    }
    r.evidence.push_back(std::move(d));
  }
  r.selection = string_at(io::require(j, "selection", where), where, "selection");
  if (!valid_selection(r.selection))
    fail("{}: field 'selection': '{}' is not one of embeddings:<model>, lexical, claim-top3, val-top3, gold",
         where, r.selection);
  return r;
}

void for_each_evidence(const fs::path& path, const std::function<void(EvidenceRecord&&)>& fn) {
  // The project's JSONL rule (io/json.hpp): blank lines skipped, a torn last line an error. Every
  // reader maps records by claim id, so a repeated id is refused, naming both lines.
  std::unordered_map<std::string, std::size_t> first_line;
  (void)io::read_jsonl(path, [&](const io::Record& r, std::size_t line) {
    EvidenceRecord rec = evidence_from_json(r.json(), r.where());
    const auto [it, fresh] = first_line.try_emplace(rec.id, line);
    if (!fresh)
      fail(
          "{}: claim id '{}' appears twice (lines {} and {}); every record of an evidence file needs "
          "its own id",
          path.string(), rec.id, it->second, line);
    fn(std::move(rec));
  });
}

std::vector<EvidenceRecord> read_evidence(const fs::path& path) {
  std::vector<EvidenceRecord> out;
  for_each_evidence(path, [&](EvidenceRecord&& r) { out.push_back(std::move(r)); });
  return out;
}

fs::path evidence_manifest_path(const fs::path& evidence_file) {
  fs::path p = evidence_file;
  p += ".manifest.json";
  return p;
}

EvidenceWriter::EvidenceWriter(fs::path path) : path_(std::move(path)) {}

void EvidenceWriter::add_input(const fs::path& input) {
  inputs_.push_back({input.string(), io::sha256_file(input)});
}

void EvidenceWriter::write(const EvidenceRecord& r) {
  if (!valid_selection(r.selection)) fail("evidence record '{}': invalid selection '{}'", r.id, r.selection);
  buf_ += io::to_line(evidence_json(r));
  buf_ += '\n';
  ++counts_.records;
  if (r.label) {
    ++counts_.labelled;
    ++counts_.by_label[std::string(verdict_name(*r.label))];
  }
  if (r.category) ++counts_.with_category;
  counts_.documents += r.evidence.size();
  if (r.evidence.empty()) ++counts_.without_evidence;
  ++counts_.by_selection[r.selection];
}

EvidenceCounts EvidenceWriter::finish(const io::OrderedJson& extra) {
  io::write_file_atomic(path_, buf_);
  io::OrderedJson m;
  m["numcheck_version"] = kVersion;
  m["file"] = path_.filename().string();
  m["sha256"] = io::sha256_hex(buf_);
  io::OrderedJson in = io::OrderedJson::array();
  for (const auto& i : inputs_) in.push_back({{"path", i.path}, {"sha256", i.sha256}});
  m["inputs"] = std::move(in);
  io::OrderedJson c;
  c["records"] = counts_.records;
  c["labelled"] = counts_.labelled;
  c["with_category"] = counts_.with_category;
  c["documents"] = counts_.documents;
  c["without_evidence"] = counts_.without_evidence;
  c["by_selection"] = counts_.by_selection;
  c["by_label"] = counts_.by_label;
  m["counts"] = std::move(c);
  for (const auto& [k, v] : extra.items()) m[k] = v;
  io::write_file_atomic(evidence_manifest_path(path_), io::to_pretty(m));
  return counts_;
}

EvidenceRecord evidence_from_claim(const Claim& c, std::string_view fallback_selection) {
  EvidenceRecord r;
  r.id = claim_id(c);
  r.claim = c.text;
  r.label = c.label;
  r.category = c.category;
  r.questions = c.questions;
  if (!c.evidences.empty()) {
    r.selection = "val-top3";
    std::size_t k = 0;
    for (const auto& e : c.evidences) {
      for (const auto& doc : e.top_k_doc) {
        ++k;
        EvidenceDoc d;
        d.doc_id = fmt::format("{}#{}", r.id, k);
        d.text = doc;
        d.query = e.questions == c.text ? std::string() : e.questions;
        d.rank = k;
        r.evidence.push_back(std::move(d));
      }
    }
  } else if (!c.doc.empty()) {
    r.selection = "gold";
    EvidenceDoc d;
    d.doc_id = r.id + "#gold";
    d.text = c.doc;
    d.rank = 1;
    r.evidence.push_back(std::move(d));
  } else {
    r.selection = std::string(fallback_selection);
  }
  return r;
}

}  // namespace numcheck::claims
