#pragma once
// Prompt files for the claim pipeline's LLM stages (data/claims/prompts/*.json): decomposition
// (claimdecomp.json, programfc.json) and the LLM verifier (verify_zero_shot.json,
// verify_few_shot.json). Each file names its sources and holds
//   method, source              what the prompt is and where its text comes from
//   sampling                    the method's default sampling settings (temperature, penalties...)
//   system                      system message, or null
//   user                        the user message template
//   example, example_separator  the template of one in-context example and what joins them
//   examples                    fixed in-context examples (decomposition prompts)
//   verdict_marker              what the verifier's prompt asks the answer to end with ("Label:"
//                               or "Verdict:", claims/llm_verify.hpp); optional
// Templates use {{name}} placeholders; every placeholder must be given a value (an unknown or
// unfilled one is an Error naming the file), so a typo never reaches a model.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/json.hpp"

namespace numcheck::claims {

struct PromptSpec {
  std::string path;    // file it was read from
  std::string sha256;  // of the file bytes (binds --resume, recorded in manifests)
  std::string method;
  std::string source;
  std::optional<std::string> system;
  std::string user;
  std::string example;
  std::string example_separator = "\n\n";
  io::Json examples = io::Json::array();
  io::Json sampling = io::Json::object();
  std::string verdict_marker;  // "" when the file names none
};

// Loads and checks a prompt file (Error naming the file and field at fault).
[[nodiscard]] PromptSpec load_prompt(const std::filesystem::path& path);
// data/claims/prompts/<name>.json
[[nodiscard]] PromptSpec builtin_prompt(std::string_view name);

using PromptVars = std::vector<std::pair<std::string, std::string>>;
// Replaces every {{name}} in `tmpl` by its value; throws Error (naming `where`) for a placeholder
// without a value. Values are inserted as is (never re-scanned).
[[nodiscard]] std::string render_template(std::string_view tmpl, const PromptVars& vars,
                                          std::string_view where);

}  // namespace numcheck::claims
