// Fuzz target: claim loaders over untrusted bytes (CSV with ',' and '@', JSON arrays, JSONL).
// Loaders may throw numcheck::Error for a file that is unusable as a whole; anything else (a
// crash, a sanitizer report, another exception type) is a bug.
#include <cstdint>
#include <string_view>

#include "claims/csv.hpp"
#include "claims/load.hpp"
#include "core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (const char* name : {"f.csv", "f.json", "f.jsonl"}) {
    try {
      (void)numcheck::claims::parse_claims(bytes, name);
    } catch (const numcheck::Error&) {
    }
  }
  (void)numcheck::claims::parse_csv(bytes, '@');
  return 0;
}
