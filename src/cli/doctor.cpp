// numcheck doctor: every runtime library and data file numcheck uses, found or not, with the
// Debian package that provides it. What to check is data (data/doctor.json): the libraries numcheck
// needs (and which of them are optional), the Debian package of each library by soname, and the
// files of the data folder.
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "io/sha256.hpp"

namespace numcheck::cli {
namespace {

namespace fs = std::filesystem;

struct DoctorArgs {
  std::string data_dir;
  bool json = false;
};

// A shared object mapped into this process: its file name (the soname it was loaded by) and path.
struct Loaded {
  std::string soname;
  std::string path;
};

std::vector<Loaded> loaded_objects() {
  std::vector<Loaded> out;
  (void)::dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t /*size*/, void* data) {
        const std::string_view name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (name.empty() || name.find('/') == std::string_view::npos) return 0;  // the program, the vDSO
        static_cast<std::vector<Loaded>*>(data)->push_back(
            {fs::path(name).filename().string(), fs::path(name).lexically_normal().string()});
        return 0;
      },
      &out);
  return out;
}

// "libicuuc.so.*" matches "libicuuc.so.72" (version "72"); a name without '*' only itself.
bool soname_matches(std::string_view pattern, std::string_view soname, std::string& version) {
  if (!pattern.empty() && pattern.back() == '*') {
    pattern.remove_suffix(1);
    if (soname.substr(0, pattern.size()) != pattern || soname.size() == pattern.size()) return false;
    version = std::string(soname.substr(pattern.size()));
    return true;
  }
  const auto so = soname.find(".so.");
  version = so == std::string_view::npos ? "" : std::string(soname.substr(so + 4));
  return pattern == soname;
}

std::string package_name(std::string package, const std::string& version) {
  if (const auto at = package.find("{version}"); at != std::string::npos) package.replace(at, 9, version);
  return package;
}

struct LibraryCheck {
  std::string name, soname, package, needed_for, path;
  bool optional = false;
  bool linked = false;  // mapped when the program started (not loaded by doctor)
  bool found = false;
  std::string error;  // why it could not be loaded
};

struct FileCheck {
  std::string relative, what, path;
  bool found = false;
  std::uintmax_t bytes = 0;
  std::string sha256;
};

// Loads `soname` the way numcheck loads a library on first use and reports where it came from.
void try_load(LibraryCheck& c) {
  void* h = ::dlopen(c.soname.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (h == nullptr) {
    const char* why = ::dlerror();
    c.error = why != nullptr ? why : "not found";
    return;
  }
  c.found = true;
  link_map* map = nullptr;
  if (::dlinfo(h, RTLD_DI_LINKMAP, static_cast<void*>(&map)) == 0 && map != nullptr && map->l_name != nullptr)
    c.path = fs::path(map->l_name).lexically_normal().string();
  // Left loaded: unloading a library that may have started threads is not safe.
}

fs::path find_data_file(const std::string& relative, const std::string& data_dir) {
  if (!data_dir.empty()) {
    fs::path p = fs::path(data_dir) / relative;
    std::error_code ec;
    return fs::is_regular_file(p, ec) ? p : fs::path();
  }
  try {
    return io::data_path(relative);
  } catch (const Error&) {
    return {};
  }
}

struct OtherLibrary {
  Loaded lib;
  std::string package;
};

// What doctor found: the listed libraries, every other library the program started with, the data
// files, and how many needed ones are missing.
struct DoctorFindings {
  std::vector<LibraryCheck> libraries;
  std::vector<OtherLibrary> others;
  std::vector<FileCheck> files;
  std::size_t missing = 0;
};

std::vector<LibraryCheck> check_libraries(const io::Record& conf, const std::vector<Loaded>& at_start) {
  std::vector<LibraryCheck> libraries;
  for (const auto& lib : conf.objects("libraries")) {
    LibraryCheck c;
    c.name = lib.string("name");
    c.soname = lib.string("soname");
    c.package = lib.string("package");
    c.needed_for = lib.string("needed_for");
    c.optional = lib.boolean("optional");
    std::string version;
    for (const auto& l : at_start) {
      if (soname_matches(c.soname, l.soname, version)) {
        c.found = c.linked = true;
        c.soname = l.soname;
        c.path = l.path;
        break;
      }
    }
    if (!c.found && c.soname.back() != '*') try_load(c);
    if (!c.found && c.soname.back() == '*')
      c.error = "not loaded (it is linked: numcheck could not start without it)";
    c.package = package_name(c.package, version);
    libraries.push_back(std::move(c));
  }
  return libraries;
}

// Every other library the program was started with, with its package when the list knows it.
std::vector<OtherLibrary> other_libraries(const io::Record& conf, const std::vector<Loaded>& at_start,
                                          const std::vector<LibraryCheck>& libraries) {
  std::map<std::string, std::string> packages;
  const io::Record pkgs = conf.object("packages");
  for (auto it = pkgs.json().begin(); it != pkgs.json().end(); ++it)
    packages[it.key()] = pkgs.string(it.key());
  std::vector<OtherLibrary> others;
  for (const auto& l : at_start) {
    const bool listed = std::any_of(libraries.begin(), libraries.end(),
                                    [&](const LibraryCheck& c) { return c.linked && c.path == l.path; });
    if (listed) continue;
    std::string package;
    std::string version;
    for (const auto& [pattern, pkg] : packages) {
      if (soname_matches(pattern, l.soname, version)) {
        package = package_name(pkg, version);
        break;
      }
    }
    others.push_back({l, package});
  }
  return others;
}

std::vector<FileCheck> check_files(const io::Record& conf, const std::string& data_dir) {
  std::vector<FileCheck> files;
  for (const auto& f : conf.objects("data_files")) {
    FileCheck c;
    c.relative = f.string("path");
    c.what = f.string("what");
    const fs::path p = find_data_file(c.relative, data_dir);
    if (!p.empty()) {
      c.found = true;
      c.path = p.string();
      c.bytes = fs::file_size(p);
      c.sha256 = io::sha256_file(p);
    }
    files.push_back(std::move(c));
  }
  return files;
}

void print_json(const DoctorFindings& d, const DoctorArgs& args) {
  io::OrderedJson j = io::OrderedJson::object();
  io::OrderedJson libs = io::OrderedJson::array();
  for (const auto& c : d.libraries) {
    io::OrderedJson l = io::OrderedJson::object();
    l["name"] = c.name;
    l["soname"] = c.soname;
    l["found"] = c.found;
    l["path"] = c.found ? io::OrderedJson(c.path) : io::OrderedJson();
    l["loaded"] = c.linked ? "linked" : "on first use";
    l["optional"] = c.optional;
    l["needed_for"] = c.needed_for;
    l["debian_package"] = c.package;
    if (!c.found) l["error"] = c.error;
    libs.push_back(std::move(l));
  }
  j["libraries"] = std::move(libs);
  io::OrderedJson other = io::OrderedJson::array();
  for (const auto& o : d.others) {
    other.push_back({{"soname", o.lib.soname},
                     {"path", o.lib.path},
                     {"debian_package", o.package.empty() ? io::OrderedJson() : io::OrderedJson(o.package)}});
  }
  j["other_linked_libraries"] = std::move(other);
  j["data_dir"] = args.data_dir.empty() ? io::OrderedJson() : io::OrderedJson(args.data_dir);
  io::OrderedJson fl = io::OrderedJson::array();
  for (const auto& c : d.files) {
    io::OrderedJson f = io::OrderedJson::object();
    f["file"] = c.relative;
    f["found"] = c.found;
    f["path"] = c.found ? io::OrderedJson(c.path) : io::OrderedJson();
    if (c.found) {
      f["bytes"] = c.bytes;
      f["sha256"] = c.sha256;
    }
    f["what"] = c.what;
    fl.push_back(std::move(f));
  }
  j["data_files"] = std::move(fl);
  j["missing"] = d.missing;
  j["ok"] = d.missing == 0;
  fmt::print("{}\n", io::to_pretty(j));
}

void print_text(const DoctorFindings& d, const DoctorArgs& args) {
  fmt::print("Libraries numcheck needs:\n");
  for (const auto& c : d.libraries) {
    const char* state = c.found ? "found  " : (c.optional ? "absent " : "MISSING");
    fmt::print(
        "  {} {:<22} {:<16} {}{}\n", state, c.name, c.package,
        c.found ? c.path : c.soname + " (" + c.error + ")",
        c.linked ? "" : (c.optional ? "  [optional, loaded on first use]" : "  [loaded on first use]"));
    fmt::print("          for {}\n", c.needed_for);
  }
  fmt::print("Other libraries linked:\n");
  for (const auto& o : d.others)
    fmt::print("  {:<24} {:<16} {}\n", o.lib.soname, o.package.empty() ? "?" : o.package, o.lib.path);
  fmt::print("Data files ({}):\n",
             args.data_dir.empty() ? "the data folder: $NUMCHECK_DATA_DIR, ../share/numcheck, the source tree"
                                   : args.data_dir);
  for (const auto& c : d.files) {
    if (c.found) {
      fmt::print("  found   {:<38} {:>9} bytes  sha256 {}  {}\n", c.relative, c.bytes, c.sha256.substr(0, 16),
                 c.path);
    } else {
      fmt::print("  MISSING {:<38} ({})\n", c.relative, c.what);
    }
  }
  if (d.missing == 0) {
    fmt::print("Everything numcheck needs is found.\n");
  } else {
    fmt::print("{} missing: numcheck commands that need {} will fail.\n", d.missing,
               d.missing == 1 ? "it" : "them");
  }
}

void run_doctor(const DoctorArgs& args) {
  const std::vector<Loaded> at_start = loaded_objects();  // before doctor loads anything itself
  const fs::path config_path = io::data_path("doctor.json");
  const io::Json config = io::read_json_file(config_path);
  const io::Record conf = io::Record::of(config, config_path.string());
  DoctorFindings d;
  d.libraries = check_libraries(conf, at_start);
  d.others = other_libraries(conf, at_start, d.libraries);
  d.files = check_files(conf, args.data_dir);
  for (const auto& c : d.libraries) d.missing += !c.found && !c.optional ? 1 : 0;
  for (const auto& c : d.files) d.missing += c.found ? 0 : 1;
  if (args.json) {
    print_json(d, args);
  } else {
    print_text(d, args);
  }
  if (d.missing != 0) throw ExitCode{3};
}

void setup(CLI::App& app) {
  auto args = std::make_shared<DoctorArgs>();
  app.add_option(
      "--data-dir", args->data_dir,
      "Check the data files in this folder only (default: where numcheck looks for them: "
      "$NUMCHECK_DATA_DIR, then ../share/numcheck next to the executable, then the source tree's data/)");
  app.add_flag("--json", args->json, "Print the findings as one JSON object");
  app.footer(
      "Lists every runtime library numcheck uses (those it is linked with, read from the running "
      "process; those loaded on first use, tried with dlopen) and every data file, found or not, "
      "with the Debian package that provides each library. An optional library (XGBoost) that is "
      "missing does not count as missing.");
  app.callback([args] { run_doctor(*args); });
}

const CommandRegistration reg{
    {"",
     "doctor",
     "List the runtime libraries and data files numcheck needs, found or not",
     setup,
     "numcheck doctor --data-dir /usr/share/numcheck --json",
     {"everything numcheck needs was found", "a needed library or data file is missing"}}};

}  // namespace
}  // namespace numcheck::cli
