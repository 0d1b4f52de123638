#pragma once
// Verdict labels (True / False / Conflicting) and the map from fact-checkers' original labels,
// loaded from data/claims/labels.json (Table 9 of the QuanTemp paper plus variants seen in the
// data). Labels Table 9 lists under two classes are resolved by the rule documented in that file;
// the loader checks that each one has a resolution and reports them.
#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace numcheck::claims {

enum class Verdict : std::uint8_t { kTrue, kFalse, kConflicting };
inline constexpr int kVerdictCount = 3;
// Stable display order used in every table and JSON output: True, False, Conflicting.
inline constexpr std::array<Verdict, 3> kVerdicts = {Verdict::kTrue, Verdict::kFalse, Verdict::kConflicting};

[[nodiscard]] std::string_view verdict_name(Verdict v) noexcept;  // "True", "False", "Conflicting"

// A label listed under two different classes in the source table, and how it was resolved.
struct DoubleListed {
  std::string label;                  // normalized
  std::vector<Verdict> listed_under;  // distinct classes, in class-name order
  Verdict resolved = Verdict::kConflicting;
};

class LabelMap {
 public:
  // Loads and validates a label file; throws Error naming the file and field at fault.
  [[nodiscard]] static LabelMap load(const std::filesystem::path& path);
  [[nodiscard]] static LabelMap parse(std::string_view json_text, std::string_view where);
  // data/claims/labels.json, loaded once (thread-safe).
  [[nodiscard]] static const LabelMap& builtin();

  // Maps any label as written ("True", "Half True/False", "Pants on Fire", "SUPPORTS") to its
  // class, or nullopt when the label is unknown.
  [[nodiscard]] std::optional<Verdict> map(std::string_view label) const;

  [[nodiscard]] const std::vector<DoubleListed>& double_listed() const noexcept { return double_listed_; }
  // Labels repeated within one class of the table (harmless; reported for completeness).
  [[nodiscard]] const std::vector<std::string>& repeated() const noexcept { return repeated_; }
  [[nodiscard]] std::size_t size() const noexcept { return map_.size(); }
  [[nodiscard]] const std::string& rule() const noexcept { return rule_; }

 private:
  std::unordered_map<std::string, Verdict> map_;
  std::vector<DoubleListed> double_listed_;
  std::vector<std::string> repeated_;
  std::string rule_;
};

// The normalization labels are matched under: curly quotes to ASCII, ASCII lower case, runs of
// whitespace to one space, trimmed.
[[nodiscard]] std::string normalize_label(std::string_view label);

}  // namespace numcheck::claims
