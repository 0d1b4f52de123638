// Fuzz target for the orbit spec parser: any bytes as a template spec (JSON). parse_spec must
// either return a spec or throw numcheck::Error naming the place at fault; any other exception,
// crash or hang is a bug. Seeds in fuzz/corpus/fuzz_orbit_spec/ include the default spec.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string_view>

#include "core/error.hpp"
#include "orbit/spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace numcheck;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const orbit::OrbitSpec spec = orbit::parse_spec(text, "fuzz.json");
    if (spec.sha256.size() != 64) __builtin_trap();
  } catch (const Error&) {  // NOLINT(bugprone-empty-catch): a refused spec is the expected outcome
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parse_spec threw a non-Error exception: %s\n", e.what());
    __builtin_trap();
  }
  return 0;
}
