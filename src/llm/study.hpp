#pragma once
// A study file: several systems run on one benchmark, scored and reported together
// (`numcheck orbit study --config FILE`, docs/study.md). JSON, format "numcheck-study/1":
//
//   {"format": "numcheck-study/1",
//    "seed": 20260725,                                  // benchmark generation seed (optional)
//    "selection": {"bases": 20},                        // optional: whole-orbit subset for every system
//    "systems": [
//      {"name": "qwen3-8b", "endpoints": ["http://localhost:8080/v1"], "model": "qwen3-8b",
//       "api_key_env": "MY_KEY", "sampling": {"temperature": 0}, "max_tokens": 2048,
//       "extra_body": {"chat_template_kwargs": {"enable_thinking": false}},
//       "model_file": "/models/qwen3-8b-q4_k_m.gguf"},
//      {"name": "simulated", "system": "reference", "inject": "times_ten=0.05"}]}
//
// Every key is checked: an unknown key (a typo such as "temprature") is an error naming it, never
// silently ignored. A system's name names its run folder (OUT/runs/<name>), so it is restricted
// to letters, digits, '.', '_' and '-' and must be unique.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "io/json.hpp"
#include "llm/options.hpp"
#include "orbit/selection.hpp"

namespace numcheck::llm {

inline constexpr const char* kStudyFormat = "numcheck-study/1";

struct StudySystem {
  std::string name;
  RunOptions options;  // backend, sampling, cap, extra body, model file (the CLI adds resume etc.)
};

struct Study {
  std::uint64_t seed = 20260725;  // benchmark generation seed
  orbit::SelectionSpec selection;
  std::vector<StudySystem> systems;
  std::string sha256;  // of the file's bytes
};

// Parses a study file's text (`where` names it in errors). Paths inside it (model_file,
// selection.base_ids_file) are taken relative to `base_dir` (the file's folder). Throws Error
// (kInvalidInput) naming the file and field for any malformed, unknown or duplicate entry.
[[nodiscard]] Study parse_study(std::string_view text, const std::string& where,
                                const std::filesystem::path& base_dir);
[[nodiscard]] Study load_study(const std::filesystem::path& file);

// True for a usable system name: 1 to 64 of [A-Za-z0-9._-], not starting with '.' or '-'.
[[nodiscard]] bool valid_system_name(std::string_view name) noexcept;

}  // namespace numcheck::llm
