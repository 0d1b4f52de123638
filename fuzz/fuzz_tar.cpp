// Fuzz target for the ustar reader (io/tar.hpp) that `orbit report --from-supplement` runs on an
// archive from anywhere: any bytes must either give members or throw numcheck::Error; and what
// it reads must survive a write/read round trip unchanged (names and contents). Any other
// exception, crash or hang is a bug. Seeds in fuzz/corpus/fuzz_tar/.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string_view>

#include "core/error.hpp"
#include "io/tar.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace numcheck;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const auto members = io::read_ustar(bytes, "fuzz.tar");
    std::vector<io::TarMember> again;
    try {
      again = io::read_ustar(io::write_ustar(members), "again.tar");
    } catch (const Error&) {  // NOLINT(bugprone-empty-catch): a name ustar cannot split is refused
      return 0;
    }
    if (again.size() != members.size()) __builtin_trap();
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (again[i].path != members[i].path || again[i].bytes != members[i].bytes) __builtin_trap();
    }
  } catch (const Error&) {  // NOLINT(bugprone-empty-catch): a refused archive is the expected outcome
  } catch (const std::exception& e) {
    std::fprintf(stderr, "read_ustar threw a non-Error exception: %s\n", e.what());
    __builtin_trap();
  }
  return 0;
}
