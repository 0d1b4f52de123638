// `numcheck view` end to end: the real server on a scored run folder (a benchmark from `orbit
// generate`, answers with a hostile payload in some responses and in a model name), its headers
// and refusals over HTTP, then the page in headless Chromium: a filter, an orbit opened by a click
// on a row, a grade read from the DOM, a screenshot, and the payload never run. Chromium tests are
// skipped when it is not installed.
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>

#include <regex>

#include <gtest/gtest.h>
#include <httplib.h>

#include "../view/view_fixture.hpp"
#include "cli_support.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "orbit/benchmark.hpp"

namespace numcheck::testing {
namespace {

namespace fs = std::filesystem;

// Every third percent view answers the payload and a wrong value (x100): a flip against its
// canonical view, which is right; every other answer is right. Response records as the runner writes
// them (with the request and its prompt).
void write_view_system(const orbit::Benchmark& bench, const fs::path& run, const std::string& model) {
  fs::create_directories(run);
  std::string lines;
  std::size_t percent = 0;
  for (const auto& v : bench.views) {
    std::string text = fmt::format("FINAL: {} {}", v.expected.str(), v.answer_unit);
    if (v.view == "percent" && percent++ % 3 == 0)
      text = kHtmlPayload + "\nFINAL: " + (v.expected * 100).str() + " " + v.answer_unit;
    io::OrderedJson r = io::OrderedJson::object();
    r["prompt_id"] = v.prompt_id;
    r["base_id"] = v.base_id;
    r["template"] = v.template_id;
    r["view"] = v.view;
    r["request"] = {{"messages", {{{"role", "user"}, {"content", v.prompt}}}}};
    r["response"] = text;
    r["finish_reason"] = "stop";
    lines += io::to_line(r) + "\n";
  }
  io::write_file_atomic(run / "responses.jsonl", lines);
  io::write_file_atomic(run / "run.json",
                        io::to_line(io::OrderedJson{{"model", model}, {"simulated", true}}));
}

// The port of "numcheck view: http://127.0.0.1:PORT/".
int port_of(const std::string& first_line) {
  std::smatch m;
  if (!std::regex_match(first_line, m, std::regex(R"(numcheck view: http://127\.0\.0\.1:(\d+)/)"))) return -1;
  return std::stoi(m[1].str());
}

// Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe: it reads
// NUL-terminated JSON messages on fd 3 and writes its own on fd 4): one page, scripts evaluated in
// it. Every wait is bounded by a number of messages or polls, never judged by its duration.
class DevtoolsPipe {
 public:
  explicit DevtoolsPipe(const fs::path& profile) {
    int to_chrome[2] = {-1, -1};
    int from_chrome[2] = {-1, -1};
    if (::pipe(to_chrome) != 0 || ::pipe(from_chrome) != 0) throw std::runtime_error("pipe");
    // Orphaned descendants (Chromium's helpers, once Chromium exits) become this process's
    // children instead of init's, so the destructor can wait for them.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork");
    if (pid_ == 0) {
      ::setpgid(0, 0);  // Chromium and its helper processes in one group, ended together
      ::dup2(to_chrome[0], 3);
      ::dup2(from_chrome[1], 4);
      const int devnull = ::open("/dev/null", O_WRONLY);
      ::dup2(devnull, 1);
      ::dup2(devnull, 2);
      for (int fd = 5; fd < 256; ++fd) ::close(fd);
      const std::string dir = "--user-data-dir=" + profile.string();
      ::execl(kChromiumPath, kChromiumPath, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
              "--no-first-run", "--disable-background-networking", "--disable-component-update",
              "--disable-sync", "--remote-debugging-pipe", "--window-size=1366,1000", dir.c_str(),
              "about:blank", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::setpgid(pid_, pid_);  // also here, so that the group exists whichever process runs first
    ::close(to_chrome[0]);
    ::close(from_chrome[1]);
    out_ = to_chrome[1];
    in_ = from_chrome[0];
  }
  // Ends Chromium and every helper process it started, and returns only when they are gone: a
  // helper still running would go on writing into the profile folder while the test removes it.
  ~DevtoolsPipe() {
    if (out_ >= 0) ::close(out_);  // Chromium exits when its pipe closes
    if (in_ >= 0) ::close(in_);
    if (pid_ <= 0) return;
    ::kill(-pid_, SIGTERM);
    // This process is a subreaper (see the constructor), so the helpers of the group become its
    // children when Chromium exits: reap the group until none is left, for up to 5 s, then kill
    // what is left and reap that.
    int st = 0;
    for (int i = 0; i < 100; ++i) {
      const pid_t r = ::waitpid(-pid_, &st, WNOHANG);
      if (r < 0) return;  // ECHILD: the whole group is gone
      if (r == 0) ::usleep(50000);
    }
    ::kill(-pid_, SIGKILL);
    while (::waitpid(-pid_, &st, 0) > 0) {
    }
  }
  DevtoolsPipe(const DevtoolsPipe&) = delete;
  DevtoolsPipe& operator=(const DevtoolsPipe&) = delete;

  // Sends a command and returns its "result" (an "error" answer fails the test and returns null).
  io::Json call(const std::string& method, const io::Json& params, const std::string& session = "") {
    io::Json msg = {{"id", ++id_}, {"method", method}, {"params", params}};
    if (!session.empty()) msg["sessionId"] = session;
    const std::string text = msg.dump() + std::string(1, '\0');
    if (::write(out_, text.data(), text.size()) != static_cast<ssize_t>(text.size())) return nullptr;
    for (int i = 0; i < 10000; ++i) {  // events before the answer are skipped
      const std::optional<io::Json> m = read_message();
      if (!m) return nullptr;
      if (m->contains("id") && (*m)["id"] == id_) {
        EXPECT_FALSE(m->contains("error")) << method << ": " << m->dump();
        return m->value("result", io::Json());
      }
    }
    return nullptr;
  }

  // Opens `url` in a new page and attaches to it.
  bool open(const std::string& url) {
    const io::Json target = call("Target.createTarget", {{"url", url}});
    if (!target.is_object() || !target.contains("targetId")) return false;
    const io::Json attached =
        call("Target.attachToTarget", {{"targetId", target["targetId"]}, {"flatten", true}});
    if (!attached.is_object() || !attached.contains("sessionId")) return false;
    session_ = attached["sessionId"];
    return true;
  }

  // The value of a JavaScript expression in the page (awaited when it is a promise).
  io::Json eval(const std::string& expression) {
    const io::Json r =
        call("Runtime.evaluate",
             {{"expression", expression}, {"returnByValue", true}, {"awaitPromise", true}}, session_);
    if (!r.is_object() || !r.contains("result")) return nullptr;
    return r["result"].value("value", io::Json());
  }

  // Polls `condition` (a JavaScript expression) until it is true, at most `polls` times.
  bool wait_for(const std::string& condition, int polls = 300) {
    for (int i = 0; i < polls; ++i) {
      if (eval(condition) == true) return true;
      ::usleep(100 * 1000);
    }
    return false;
  }

 private:
  std::optional<io::Json> read_message() {
    std::string buf;
    for (;;) {
      ::pollfd p{in_, POLLIN, 0};
      if (::poll(&p, 1, 60 * 1000) <= 0) return std::nullopt;  // a hung browser ends the test
      char c = 0;
      if (::read(in_, &c, 1) != 1) return std::nullopt;
      if (c == '\0') break;
      buf += c;
    }
    auto j = io::try_parse_json(buf, "devtools");
    return j.ok() ? std::optional<io::Json>(std::move(*j.value)) : std::nullopt;
  }
  pid_t pid_ = -1;
  int out_ = -1, in_ = -1;
  int id_ = 0;
  std::string session_;
};

class ViewBrowser : public SharedDirSuite<ViewBrowser> {
 protected:
  static fs::path root() { return *root_; }
  static void SetUpTestSuite() {
    make_root_with_bench("view_browser");
    const orbit::Benchmark b = orbit::load_benchmark(bench());
    write_view_system(b, root() / "runs" / "a", "model-a" + kHtmlPayload);
    write_view_system(b, root() / "runs" / "b", "model-b");
    for (const char* s : {"a", "b"}) {
      const fs::path run = root() / "runs" / s;
      auto r = run_cli(fmt::format("orbit score --bench {} --responses {} --out {}", quoted(bench()),
                                   quoted(run / "responses.jsonl"), quoted(run / "scores.jsonl")));
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
};

TEST_F(ViewBrowser, ServesJsonWithStrictHeadersRefusesOtherMethodsAndStopsOnSigterm) {
  Child server({NUMCHECK_CLI, "view", (root() / "runs").string(), "--port", "0"}, true);
  const int port = port_of(server.first_line);
  ASSERT_GT(port, 0) << server.first_line;
  httplib::Client client("127.0.0.1", port);
  auto cat = client.Get("/api/catalog");
  ASSERT_TRUE(cat) << "no answer";
  EXPECT_EQ(cat->status, 200);
  EXPECT_EQ(cat->get_header_value("Content-Type"), "application/json; charset=utf-8");
  EXPECT_EQ(cat->get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_NE(cat->get_header_value("Content-Security-Policy").find("default-src 'self'"), std::string::npos);
  const io::Json j = io::parse_json(cat->body, "catalog");
  ASSERT_EQ(j["runs"].size(), 2u);
  EXPECT_EQ(j["runs"][0]["name"], "model-a" + kHtmlPayload);
  auto page = client.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(page->body.find("<script>"), std::string::npos) << "no inline script";
  EXPECT_EQ(page->body.find("http"), std::string::npos) << "no external asset";
  auto post = client.Post("/api/catalog", "{}", "application/json");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  for (const char* path : {"/api/rows?run=../runs/a", "/../bench/views.jsonl", "/a/responses.jsonl"}) {
    auto r = client.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 404) << path;
  }
  // A second viewer on the same port is refused (exit 1, no URL), never sharing it.
  Child second({NUMCHECK_CLI, "view", (root() / "runs").string(), "--port", std::to_string(port)}, true);
  EXPECT_EQ(second.first_line, "");
  EXPECT_EQ(second.signal_and_wait(SIGTERM), 1);
  EXPECT_EQ(server.signal_and_wait(SIGTERM), 0);
  // Ctrl-C (SIGINT) stops it cleanly too.
  Child again({NUMCHECK_CLI, "view", (root() / "runs" / "a").string()}, true);
  ASSERT_GT(port_of(again.first_line), 0) << again.first_line;
  EXPECT_EQ(again.signal_and_wait(SIGINT), 0);
}

TEST_F(ViewBrowser, ChromiumFiltersOpensAnOrbitAndNeverRunsThePayload) {
  if (!fs::exists(kChromiumPath)) GTEST_SKIP() << "chromium is not installed at " << kChromiumPath;
  Child server({NUMCHECK_CLI, "view", (root() / "runs").string(), "--port", "0"}, true);
  const int port = port_of(server.first_line);
  ASSERT_GT(port, 0) << server.first_line;
  // The filter (system a, percent views) and the orbit of the first percent view, both from the
  // URL as a bookmark gives them (the click on a row is the DevTools test's).
  const orbit::Benchmark b = orbit::load_benchmark(bench());
  std::string first_percent_base;
  for (const auto& v : b.views) {
    if (v.view == "percent") {
      first_percent_base = v.base_id;
      break;
    }
  }
  ASSERT_FALSE(first_percent_base.empty());
  const std::string url =
      fmt::format("http://127.0.0.1:{}/#tab=runs&run=a&view=percent&orbit={}", port, first_percent_base);
  const std::string dom = run_chromium(root(), "--virtual-time-budget=10000 --dump-dom '" + url + "'");
  ASSERT_FALSE(dom.empty()) << "chromium produced no DOM";
  EXPECT_NE(dom.find("data-state=\"ready\""), std::string::npos) << "the page did not finish";
  // The filter: every row is a percent view, and there are rows.
  const std::size_t percent_rows = occurrences(dom, "<tr data-view=\"percent\"");
  EXPECT_GE(percent_rows, 10u);
  EXPECT_EQ(occurrences(dom, "<tr data-view="), percent_rows);
  // The orbit of the first percent row: its canonical base (right) and the percent view (the
  // payload, wrong), flipped.
  std::smatch orbit_id;
  ASSERT_TRUE(std::regex_search(dom, orbit_id, std::regex("<span id=\"orbit-id\">([^<]+)</span>")))
      << "no orbit";
  EXPECT_EQ(orbit_id[1].str(), first_percent_base);
  EXPECT_NE(dom.find("<div class=\"card base\" data-view=\"canonical\">"), std::string::npos);
  std::smatch card;
  ASSERT_TRUE(std::regex_search(
      dom, card,
      std::regex("<div class=\"card flipped\" data-view=\"percent\">([\\s\\S]*?)</details></div>")));
  EXPECT_NE(card[1].str().find("<span class=\"strict-outcome wrong\">value_error</span>"), std::string::npos)
      << card[1];
  EXPECT_NE(dom.find("<span class=\"strict-outcome correct\">correct</span>"), std::string::npos);
  EXPECT_NE(dom.find("FLIP vs base"), std::string::npos);
  // The payload is text: the title is the page's, no injected element, shown escaped.
  EXPECT_NE(dom.find("<title>numcheck view</title>"), std::string::npos);
  EXPECT_EQ(dom.find("<div id=\"injected\""), std::string::npos);
  EXPECT_EQ(dom.find("<img"), std::string::npos);
  EXPECT_GE(occurrences(dom, "&lt;script&gt;document.title='PWNED'"), 2u);

  expect_screenshot(root(), root() / "view.png", "--virtual-time-budget=10000 --window-size=1366,1000", url,
                    "NUMCHECK_KEEP_VIEW_SCREENSHOT");
  EXPECT_EQ(server.signal_and_wait(SIGTERM), 0);
}

TEST_F(ViewBrowser, ChromiumOverDevtoolsClicksAFilterAndAnOrbitAndReadsAGrade) {
  if (!fs::exists(kChromiumPath)) GTEST_SKIP() << "chromium is not installed at " << kChromiumPath;
  Child server({NUMCHECK_CLI, "view", (root() / "runs").string(), "--port", "0"}, true);
  const int port = port_of(server.first_line);
  ASSERT_GT(port, 0) << server.first_line;
  const fs::path profile = root() / "devtools-profile";
  {
    DevtoolsPipe chrome(profile);
    ASSERT_TRUE(chrome.open(fmt::format("http://127.0.0.1:{}/", port)));
    ASSERT_TRUE(chrome.wait_for("document.body && document.body.dataset.state === 'ready'"));
    EXPECT_EQ(chrome.eval("document.querySelectorAll('#rows tbody tr').length"), 50);
    EXPECT_EQ(chrome.eval("document.getElementById('f-run').options.length"), 2);
    // Type a filter into the form and press Apply, as a user does.
    chrome.eval(
        "document.getElementById('f-view').value = 'percent';"
        "document.getElementById('f-outcome').value = 'wrong';"
        "document.body.dataset.state = 'clicked'; document.getElementById('apply').click(); true");
    ASSERT_TRUE(chrome.wait_for("document.body.dataset.state === 'ready'"));
    EXPECT_EQ(
        chrome.eval("location.hash.includes('view=percent') && location.hash.includes('outcome=wrong')"),
        true);
    const io::Json views = chrome.eval(
        "Array.from(document.querySelectorAll('#rows tbody tr')).map(r => r.dataset.view + ' ' + "
        "r.querySelector('td.outcome').textContent.split(' ')[0])");
    ASSERT_TRUE(views.is_array());
    ASSERT_FALSE(views.empty());
    for (const auto& v : views) EXPECT_EQ(v, "percent value_error");
    // Open the first row's orbit and read its grades.
    chrome.eval(
        "document.body.dataset.state = 'clicked'; document.querySelector('#rows .open-orbit').click(); true");
    ASSERT_TRUE(chrome.wait_for(
        "document.body.dataset.state === 'ready' && !!document.querySelector('.orbit-grid')"));
    EXPECT_EQ(chrome.eval("document.querySelector('.card.base').dataset.view"), "canonical");
    EXPECT_EQ(chrome.eval("document.querySelector('.card.base .strict-outcome').textContent"), "correct");
    EXPECT_EQ(
        chrome.eval("document.querySelector('.card.flipped[data-view=percent] .strict-outcome').textContent"),
        "value_error");
    EXPECT_EQ(chrome.eval("document.querySelector('.card.flipped .flip-mark').textContent"), "FLIP vs base");
    // The payload is in the page as text and never ran.
    EXPECT_EQ(chrome.eval("Array.from(document.querySelectorAll('.card.flipped pre'))"
                          ".some(p => p.textContent.startsWith('<script>document.title'))"),
              true);
    EXPECT_EQ(chrome.eval("document.title"), "numcheck view");
    EXPECT_EQ(
        chrome.eval(
            "document.getElementById('injected') === null && document.querySelectorAll('img').length === 0"),
        true);
  }
  EXPECT_TRUE(remove_tree(profile)) << profile;
  EXPECT_EQ(server.signal_and_wait(SIGTERM), 0);
}

// The claims tab in Chromium over DevTools, as a user works it: the first claim-orbit file opens
// by itself; each claim shows its verdicts, its evidence and its variants with the rewritten
// number marked (the original and its exact value on hover) and a variant whose spans do not fit
// flagged; a claim holding a payload shows it as text; a search and another file are chosen in
// the form and applied.
TEST_F(ViewBrowser, ChromiumOverDevtoolsShowsClaimsVerdictsAndVariants) {
  if (!fs::exists(kChromiumPath)) GTEST_SKIP() << "chromium is not installed at " << kChromiumPath;
  const fs::path dir = root() / "claims-view";
  write_view_claims(dir / "claims");
  Child server({NUMCHECK_CLI, "view", dir.string(), "--port", "0"}, true);
  const int port = port_of(server.first_line);
  ASSERT_GT(port, 0) << server.first_line;
  const fs::path profile = root() / "devtools-profile-claims";
  {
    DevtoolsPipe chrome(profile);
    ASSERT_TRUE(chrome.open(fmt::format("http://127.0.0.1:{}/", port)));
    // No run in the folder: the claims tab is the first, on the claim-orbit file.
    ASSERT_TRUE(
        chrome.wait_for("document.body && document.body.dataset.state === 'ready' && "
                        "document.querySelectorAll('#claim-list .claim').length > 0"));
    EXPECT_EQ(chrome.eval("location.hash.includes('tab=claims')"), true);
    EXPECT_EQ(chrome.eval("document.getElementById('claims').hidden"), false);
    EXPECT_EQ(chrome.eval("document.getElementById('c-file').value"), "claims/orbits/claims.jsonl");
    EXPECT_EQ(chrome.eval("document.getElementById('c-file').options.length"), 2);
    EXPECT_EQ(chrome.eval("document.querySelectorAll('#claim-list .claim').length"), 2);
    EXPECT_EQ(chrome.eval("document.getElementById('claims-status').textContent"), "2 claims shown");
    // The first claim: its gold label and evidence (joined from the evidence file), its verdict,
    // its variants.
    const std::string first = "document.querySelectorAll('#claim-list .claim')[0]";
    EXPECT_EQ(chrome.eval(first + ".querySelector('h3').textContent"), "Sales rose 50% in 2020.");
    EXPECT_EQ(chrome.eval(first + ".querySelector('.meta').textContent"), "id c1 · gold True");
    EXPECT_EQ(chrome.eval(first + ".querySelector(':scope > .verdicts li').textContent"),
              "claims/verify/predictions.jsonl: True");
    EXPECT_EQ(chrome.eval(first + ".querySelector('details summary').textContent"),
              "evidence (1, claims/evidence.jsonl)");
    EXPECT_EQ(chrome.eval(first + ".querySelector('.evidence li').textContent"), "d1 Sales grew by half.");
    EXPECT_EQ(chrome.eval(first + ".querySelectorAll('.variant').length"), 2);
    const std::string fraction = first + ".querySelectorAll('.variant')[0]";
    EXPECT_EQ(chrome.eval(fraction + ".querySelector('.variant-text').textContent"),
              "Sales rose 1/2 in 2020.");
    EXPECT_EQ(chrome.eval(fraction + ".querySelector('mark').textContent"), "1/2");
    EXPECT_EQ(chrome.eval(fraction + ".querySelector('mark').title"), "was: 50% (= 1/2)");
    EXPECT_EQ(chrome.eval(fraction + ".querySelector('.verdicts li').textContent"),
              "claims/verify/predictions.jsonl: False");
    EXPECT_EQ(chrome.eval(fraction + ".querySelector('.cut')"), nullptr);
    const std::string bad = first + ".querySelectorAll('.variant')[1]";
    EXPECT_EQ(chrome.eval(bad + ".querySelector('.cut').textContent"), " [spans do not fit the text]");
    EXPECT_EQ(chrome.eval(bad + ".querySelector('.verdicts li b').textContent"), "none");
    // The second claim holds the payload: shown as text, never run.
    const std::string second = "document.querySelectorAll('#claim-list .claim')[1]";
    EXPECT_EQ(chrome.eval(second + ".querySelector('h3').textContent"),
              "The town has " + kViewPayload + " people.");
    EXPECT_EQ(chrome.eval("document.title"), "numcheck view");
    EXPECT_EQ(chrome.eval("document.querySelectorAll('img, #claim-list script').length"), 0);
    // A search typed into the form and applied.
    chrome.eval(
        "document.getElementById('c-q').value = 'town';"
        "document.body.dataset.state = 'clicked'; document.getElementById('c-apply').click(); true");
    ASSERT_TRUE(chrome.wait_for("document.body.dataset.state === 'ready'"));
    EXPECT_EQ(chrome.eval("location.hash.includes('cq=town')"), true);
    EXPECT_EQ(
        chrome.eval("Array.from(document.querySelectorAll('#claim-list .claim h3')).map(h => h.textContent)"),
        io::Json::array({"The town has " + kViewPayload + " people."}));
    // The evidence file chosen in the form: its claim with the gold label and the variants of
    // the claim-orbit file.
    chrome.eval(
        "document.getElementById('c-q').value = ''; document.getElementById('c-file').value = "
        "'claims/evidence.jsonl'; document.body.dataset.state = 'clicked'; "
        "document.getElementById('c-apply').click(); true");
    ASSERT_TRUE(chrome.wait_for("document.body.dataset.state === 'ready'"));
    EXPECT_EQ(chrome.eval("document.querySelectorAll('#claim-list .claim').length"), 1);
    EXPECT_EQ(chrome.eval("document.querySelector('#claim-list .claim .meta').textContent"),
              "id c1 · gold True");
    EXPECT_EQ(chrome.eval("document.querySelectorAll('#claim-list .claim .variant').length"), 2);
    EXPECT_EQ(chrome.eval("document.title"), "numcheck view");
  }
  EXPECT_TRUE(remove_tree(profile)) << profile;
  EXPECT_EQ(server.signal_and_wait(SIGTERM), 0);
}

}  // namespace
}  // namespace numcheck::testing
