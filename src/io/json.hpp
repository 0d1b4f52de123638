#pragma once
// JSON helpers over nlohmann::json: parsing with errors that name the file and line, typed field
// access with errors that name the field, and one-line serialization for JSONL records.
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace numcheck::io {

using Json = nlohmann::json;                 // objects with sorted keys (hashing, comparison)
using OrderedJson = nlohmann::ordered_json;  // objects in insertion order (records we write)

// Parses text; `where` ("responses.jsonl:12") prefixes the error message. Throws Error.
[[nodiscard]] Json parse_json(std::string_view text, std::string_view where);
[[nodiscard]] OrderedJson parse_ordered_json(std::string_view text, std::string_view where);
// Reads and parses a whole JSON file.
[[nodiscard]] Json read_json_file(const std::filesystem::path& path);

// Compact one-line form; invalid UTF-8 in strings is replaced with U+FFFD, never thrown on.
[[nodiscard]] std::string to_line(const Json& j);
[[nodiscard]] std::string to_line(const OrderedJson& j);
// Indented form for manifests and reports (2 spaces, trailing newline).
[[nodiscard]] std::string to_pretty(const OrderedJson& j);

// Field access with clear errors: require_string(obj, "prompt_id", "views.jsonl:7").
[[nodiscard]] const Json& require(const Json& obj, std::string_view key, std::string_view where);
[[nodiscard]] std::string require_string(const Json& obj, std::string_view key, std::string_view where);

}  // namespace numcheck::io
