#pragma once
// The user's cache folder for numcheck's derived, rebuildable files (the model-response cache, the
// orbit benchmark index cache): $NUMCHECK_CACHE_DIR, else $XDG_CACHE_HOME/numcheck, else
// $HOME/.cache/numcheck, else <temp>/numcheck-cache.
#include <filesystem>

namespace numcheck::io {

[[nodiscard]] std::filesystem::path user_cache_dir();

}  // namespace numcheck::io
