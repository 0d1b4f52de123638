#pragma once
// Small run and claims folders for the viewer's tests, written record by record.
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "io/files.hpp"
#include "io/json.hpp"

namespace numcheck::testing {

inline const std::string kViewPayload = "<script>document.title='PWNED'</script><img src=x onerror=alert(1)>";

inline std::string response_line(const std::string& base, const std::string& view, const std::string& text) {
  io::OrderedJson r = io::OrderedJson::object();
  r["prompt_id"] = base + ":" + view;
  r["base_id"] = base;
  r["template"] = base.substr(0, 2);
  r["view"] = view;
  r["request"] = {{"messages", {{{"role", "user"}, {"content", "How much? (" + view + ")"}}}}};
  r["response"] = text;
  r["finish_reason"] = "stop";
  return io::to_line(r) + "\n";
}

inline std::string score_line(const std::string& base, const std::string& view, std::size_t line,
                              bool strict_ok, bool audit_ok) {
  io::OrderedJson s = io::OrderedJson::object();
  s["prompt_id"] = base + ":" + view;
  s["base_id"] = base;
  s["view"] = view;
  s["template"] = base.substr(0, 2);
  s["expected"] = "64/5";
  s["answer_unit"] = "L";
  s["line"] = line;
  s["strict"] = {{"outcome", strict_ok ? "correct" : "value_error"}, {"value", strict_ok ? "64/5" : "640"}};
  s["audit"] = {{"outcome", audit_ok ? "correct" : "format_error"},
                {"value", audit_ok ? io::OrderedJson("64/5") : io::OrderedJson()},
                {"recovered", false},
                {"rules", audit_ok ? io::OrderedJson::array({"strip_bold"}) : io::OrderedJson::array()}};
  return io::to_line(s) + "\n";
}

// A run folder: bases CV-0001 (canonical, fraction, percent) and DD-0002 (canonical, percent), a
// broken line 4, the payload in DD-0002:percent, and a 2000-byte response in CV-0001:fraction.
// Scores: every record but DD-0002:percent; CV-0001:percent is wrong in both layers (a flip).
inline void write_view_run(const std::filesystem::path& dir, const std::string& model) {
  std::filesystem::create_directories(dir);
  std::string r, s;
  r += response_line("CV-0001", "canonical", "FINAL: 12.8 L");
  r += response_line("CV-0001", "fraction", std::string(2000, 'x') + "\xC3\xA9 FINAL: 64/5 L");
  r += response_line("CV-0001", "percent", "FINAL: 640 L");
  r += "{\"prompt_id\": \"broken\n";
  r += response_line("DD-0002", "canonical", "FINAL: 3 km");
  r += response_line("DD-0002", "percent", kViewPayload + "\nFINAL: 3 km \x01\xFF");
  s += score_line("CV-0001", "canonical", 1, true, true);
  s += score_line("CV-0001", "fraction", 2, true, true);
  s += score_line("CV-0001", "percent", 3, false, false);
  s += score_line("DD-0002", "canonical", 5, false, true);
  io::write_file_atomic(dir / "responses.jsonl", r);
  io::write_file_atomic(dir / "scores.jsonl", s);
  io::write_file_atomic(dir / "run.json",
                        io::to_line(io::OrderedJson{{"model", model}, {"simulated", true}}));
}

// A claim-orbit folder, an evidence file and a verifier's predictions.
inline void write_view_claims(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir / "orbits");
  std::filesystem::create_directories(dir / "verify");
  io::OrderedJson c = {{"id", "c1"}, {"claim", "Sales rose 50% in 2020."}};
  c["variants"] = io::OrderedJson::array(
      {{{"id", "c1#fraction"},
        {"form", "fraction"},
        {"text", "Sales rose 1/2 in 2020."},
        {"spans",
         io::OrderedJson::array(
             {{{"begin", 11}, {"end", 14}, {"value", "1/2"}, {"original", "50%"}, {"rewritten", "1/2"}}})}},
       {{"id", "c1#bad"},
        {"form", "bad"},
        {"text", "short"},
        {"spans", io::OrderedJson::array({{{"begin", 3}, {"end", 99}}})}}});
  io::OrderedJson c2 = {{"id", "c2"}, {"claim", "The town has " + kViewPayload + " people."}};
  c2["variants"] = io::OrderedJson::array();
  io::write_file_atomic(dir / "orbits" / "claims.jsonl", io::to_line(c) + "\n" + io::to_line(c2) + "\n");
  io::write_file_atomic(dir / "orbits" / "manifest.json", "{}");
  io::OrderedJson e = {{"id", "c1"}, {"claim", "Sales rose 50% in 2020."}, {"label", "True"}};
  e["evidence"] = io::OrderedJson::array({{{"doc_id", "d1"}, {"text", "Sales grew by half."}, {"rank", 1}}});
  io::write_file_atomic(dir / "evidence.jsonl", io::to_line(e) + "\n");
  io::write_file_atomic(dir / "verify" / "predictions.jsonl",
                        "{\"id\":\"c1\",\"label\":\"True\"}\n{\"id\":\"c1#fraction\",\"label\":\"False\"}\n");
  io::write_file_atomic(dir / "verify" / "manifest.json", "{}");
}

}  // namespace numcheck::testing
