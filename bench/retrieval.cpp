// bench_retrieval: indexing and top-100 query speed of numcheck's index (src/retrieval) side by
// side with Xapian on the same deterministic synthetic collection and queries, in one run.
//
//   build/release/bench/bench_retrieval                    # 20,000 snippets, 1,000 queries
//   build/release/bench/bench_retrieval --docs 423320      # the paper's collection size
//   options: --docs N --queries Q --threads T (indexing threads, default 2) --no-xapian
//            --no-number-terms (plain words only, to see what the quantity layer costs)
//            --write-corpus FILE (also write the collection as JSONL {"id","text"}, for
//            `numcheck claims index --corpus FILE`; nothing is measured then)
//            --corpus FILE (snippets from a JSONL file of {"id","text"} instead of the synthetic
//            collection, e.g. bench/make_corpus.py's) --query-file FILE (one query a line)
//
// Each system runs in its own child process so its peak resident memory (getrusage of the child)
// is its own. Indexing is end to end: text in memory -> index file on disk (tokenizing, number
// terms, inverting, writing, checksum). Queries are single-threaded top-100 (ours with MaxScore;
// Xapian BM25 with k1 = 1.2, b = 0.75, OR of the query's words through its QueryParser). The
// generator's time is excluded. Figures are wall-clock: run on a quiet machine, or compare
// instruction counts under callgrind.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#if NUMCHECK_HAVE_XAPIAN
#include <xapian.h>
#endif

#include "io/files.hpp"
#include "io/json.hpp"
#include "io/sha256.hpp"
#include "retrieval/index.hpp"
#include "retrieval/synthetic.hpp"

namespace {

namespace fs = std::filesystem;
using namespace numcheck;
using Clock = std::chrono::steady_clock;

struct Result {
  double index_cpu_s = 0, query_cpu_s = 0;
  double index_s = 0, docs_per_s = 0, queries_per_s = 0, exhaustive_qps = 0;
  double index_mb = 0, peak_mb = 0, mean_hits = 0;
  double load_s = 0, searcher_s = 0, query_peak_mb = 0;  // the query process: load, then queries
  double load_cpu_s = 0;                                 // the load's CPU time (user + system)
};

double secs(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// CPU seconds (user + system) of every thread of this process so far.
double cpu_now() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

std::uint64_t dir_bytes(const fs::path& p) {
  std::uint64_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(p))
    if (e.is_regular_file()) n += e.file_size();
  return n;
}

Result run_ours(const std::vector<std::string>& docs, const std::vector<std::string>& ids, unsigned threads,
                const fs::path& dir, bool numbers) {
  Result r;
  const double c0 = cpu_now();
  const auto t0 = Clock::now();
  {
    retrieval::IndexBuilder b({.stem = false, .number_terms = numbers});
    b.reserve(docs.size());
    for (std::size_t i = 0; i < docs.size(); ++i) b.add({ids[i], docs[i], ""});
    const retrieval::Index ix = b.build(threads);
    ix.save(dir / "index.bin");
  }
  const auto t1 = Clock::now();
  r.index_cpu_s = cpu_now() - c0;
  r.index_s = secs(t0, t1);
  r.docs_per_s = static_cast<double>(docs.size()) / r.index_s;
  r.index_mb = static_cast<double>(fs::file_size(dir / "index.bin")) / 1e6;
  return r;
}

// Resident memory of this process now (MB), from /proc/self/statm.
double resident_mb() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long size = 0, resident = 0;
  const int got = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  return got == 2 ? static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / 1e6 : 0;
}

// In a process of its own: load the index file (read, verify, decode its tables), set up the
// searcher, run the queries. Its memory figure is what the loaded index and searcher add to the
// process (resident after the queries minus before the load; the child inherits the collection).
Result query_ours(const std::vector<std::string>& queries, const fs::path& dir) {
  Result r;
  const double rss0 = resident_mb();
  const double lc0 = cpu_now();
  const auto l0 = Clock::now();
  const retrieval::Index ix = retrieval::Index::load(dir / "index.bin");
  const auto l1 = Clock::now();
  r.load_s = secs(l0, l1);
  r.load_cpu_s = cpu_now() - lc0;
  const retrieval::Searcher s(ix, {});
  r.searcher_s = secs(l1, Clock::now());
  {
    // What the file holds, in MB (index format 3: string tables carry u64 offsets, counted apart;
    // the texts and metadata are zstd blocks with a table of first document, raw size and offset).
    std::uint64_t ids = 0, term_bytes = 0;
    for (std::uint32_t d = 0; d < ix.num_docs(); ++d) ids += ix.doc_id(d).size();
    for (std::uint32_t t = 0; t < ix.num_terms(); ++t) term_bytes += ix.term_text(t).size();
    const double n = ix.num_docs(), nt = static_cast<double>(ix.num_terms());
    const double tb = static_cast<double>(ix.num_text_blocks());
    const auto mb = [](auto v) { return static_cast<double>(v) / 1e6; };
    fmt::print(
        "numcheck index file: {} terms, {} postings; MB: texts and metadata {:.1f} compressed ({:.1f} raw, "
        "{:.2f}x; {} blocks, dictionary {:.3f}, block table {:.2f}), ids {:.1f}, id order {:.1f}, "
        "string offsets {:.1f}, lengths {:.1f}, terms {:.1f}, term offsets {:.1f}, posting blocks {:.1f} "
        "({} blocks, {:.2f} bytes per posting), block tables {:.1f}; SHA-256 {}\n",
        ix.num_terms(), ix.num_postings(), mb(ix.text_bytes()), mb(ix.text_raw_bytes()),
        static_cast<double>(ix.text_raw_bytes()) / std::max(1.0, static_cast<double>(ix.text_bytes())),
        ix.num_text_blocks(), mb(ix.text_dict_bytes()), (16 * tb + 12) / 1e6, mb(ids), 4 * n / 1e6,
        (8 * (n + 1) + 8 * (nt + 1)) / 1e6, 4 * n / 1e6, mb(term_bytes), 4 * (nt + 1) / 1e6,
        mb(ix.posting_bytes()), ix.num_blocks(),
        static_cast<double>(ix.posting_bytes()) / std::max(1.0, static_cast<double>(ix.num_postings())),
        12 * static_cast<double>(ix.num_blocks()) / 1e6, io::sha256_file(dir / "index.bin"));
    std::fflush(stdout);
  }
  std::vector<retrieval::Query> qs;
  for (const auto& q : queries) qs.push_back(retrieval::make_query(q, ix.tokenizer()));
  std::size_t hits = 0;
  const double c2 = cpu_now();
  const auto t2 = Clock::now();
  for (const auto& q : qs) hits += s.search(q, 100).size();
  const auto t3 = Clock::now();
  r.query_cpu_s = cpu_now() - c2;
  r.queries_per_s = static_cast<double>(qs.size()) / secs(t2, t3);
  r.mean_hits = static_cast<double>(hits) / static_cast<double>(qs.size());
  const std::size_t nx = std::min<std::size_t>(qs.size(), 200);
  const auto t4 = Clock::now();
  for (std::size_t i = 0; i < nx; ++i) hits += s.search_exhaustive(qs[i], 100).size();
  r.exhaustive_qps = static_cast<double>(nx) / secs(t4, Clock::now());
  r.query_peak_mb = resident_mb() - rss0;
  return r;
}

#if NUMCHECK_HAVE_XAPIAN
Result run_xapian(const std::vector<std::string>& docs, const std::vector<std::string>& ids,
                  const std::vector<std::string>& queries, const fs::path& dir) {
  Result r;
  const double c0 = cpu_now();
  const auto t0 = Clock::now();
  {
    Xapian::WritableDatabase db((dir / "xapian").string(), Xapian::DB_CREATE_OR_OVERWRITE);
    Xapian::TermGenerator tg;
    for (std::size_t i = 0; i < docs.size(); ++i) {
      Xapian::Document d;
      tg.set_document(d);
      tg.index_text(docs[i]);
      d.set_data(ids[i]);
      db.add_document(d);
    }
    db.commit();
  }
  const auto t1 = Clock::now();
  r.index_cpu_s = cpu_now() - c0;
  r.index_s = secs(t0, t1);
  r.docs_per_s = static_cast<double>(docs.size()) / r.index_s;
  r.index_mb = static_cast<double>(dir_bytes(dir / "xapian")) / 1e6;
  Xapian::Database db((dir / "xapian").string());
  Xapian::Enquire enq(db);
  enq.set_weighting_scheme(Xapian::BM25Weight(1.2, 0, 1, 0.75, 0.5));
  Xapian::QueryParser qp;
  qp.set_database(db);
  qp.set_default_op(Xapian::Query::OP_OR);
  std::vector<Xapian::Query> qs;
  for (const auto& q : queries) qs.push_back(qp.parse_query(q, 0));
  std::size_t hits = 0;
  const double c2 = cpu_now();
  const auto t2 = Clock::now();
  for (const auto& q : qs) {
    enq.set_query(q);
    hits += enq.get_mset(0, 100).size();
  }
  r.query_cpu_s = cpu_now() - c2;
  r.queries_per_s = static_cast<double>(qs.size()) / secs(t2, Clock::now());
  r.mean_hits = static_cast<double>(hits) / static_cast<double>(qs.size());
  return r;
}

#endif

// Runs fn in a child process; the child's peak RSS comes from wait4.
template <typename Fn>
Result in_child(Fn fn) {
  int fds[2];
  if (pipe(fds) != 0) std::exit(1);
  std::fflush(stdout);  // or the child prints the parent's buffered lines again
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    Result r = fn();
    if (write(fds[1], &r, sizeof r) != static_cast<ssize_t>(sizeof r)) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  Result r;
  const auto got = read(fds[0], &r, sizeof r);
  close(fds[0]);
  int status = 0;
  rusage ru{};
  wait4(pid, &status, 0, &ru);
  if (got != static_cast<ssize_t>(sizeof r) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fmt::print(stderr, "bench_retrieval: child failed\n");
    std::exit(1);
  }
  r.peak_mb = static_cast<double>(ru.ru_maxrss) / 1024.0;
  return r;
}

std::string xapian_name() {
#if NUMCHECK_HAVE_XAPIAN
  return std::string("Xapian ") + XAPIAN_VERSION;
#else
  return "";
#endif
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t ndocs = 20000, nqueries = 1000;
  unsigned threads = 2;
  bool xapian = true, numbers = true;
  std::string corpus_out, corpus_in, queries_in;
  if (const char* e = std::getenv("NUMCHECK_BENCH_RETRIEVAL_DOCS")) ndocs = std::strtoull(e, nullptr, 10);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--docs")
      ndocs = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "--queries")
      nqueries = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "--threads")
      threads = static_cast<unsigned>(std::strtoul(next().c_str(), nullptr, 10));
    else if (a == "--no-xapian")
      xapian = false;
    else if (a == "--no-number-terms")
      numbers = false;
    else if (a == "--write-corpus")
      corpus_out = next();
    else if (a == "--corpus")
      corpus_in = next();
    else if (a == "--query-file")
      queries_in = next();
    else if (a.rfind("--benchmark", 0) == 0)
      continue;  // scripts/run-benchmarks.sh passes these
    else {
      fmt::print(stderr,
                 "usage: bench_retrieval [--docs N] [--queries Q] [--threads T] [--no-xapian] "
                 "[--no-number-terms] [--write-corpus FILE] [--corpus FILE] [--query-file FILE]\n");
      return 2;
    }
  }
  const auto g0 = Clock::now();
  const retrieval::SyntheticCollection coll;
  std::vector<std::string> docs, ids, queries;
  if (corpus_in.empty()) {
    for (std::size_t i = 0; i < ndocs; ++i) {
      docs.push_back(coll.document(i));
      ids.push_back(retrieval::SyntheticCollection::document_id(i));
    }
  } else {
    io::for_each_line(corpus_in, [&](const io::Line& l) {
      if (l.text.empty()) return;
      const io::Json j = io::Json::parse(l.text);
      ids.push_back(j.at("id").get<std::string>());
      docs.push_back(j.at("text").get<std::string>());
    });
    ndocs = docs.size();
  }
  if (queries_in.empty()) {
    for (std::size_t i = 0; i < nqueries; ++i) queries.push_back(coll.query(i));
  } else {
    io::for_each_line(queries_in, [&](const io::Line& l) {
      if (!l.text.empty() && queries.size() < nqueries) queries.emplace_back(l.text);
    });
    nqueries = queries.size();
  }
  const double gen_s = secs(g0, Clock::now());
  if (!corpus_out.empty()) {
    std::string out;
    for (std::size_t i = 0; i < ndocs; ++i) {
      io::OrderedJson j;
      j["id"] = ids[i];
      j["text"] = docs[i];
      out += io::to_line(j);
      out += '\n';
    }
    io::write_file_atomic(corpus_out, out);
    fmt::print("wrote {} snippets to {}\n", ndocs, corpus_out);
    return 0;
  }
  const fs::path dir = fs::temp_directory_path() / fmt::format("numcheck_bench_retrieval_{}", getpid());
  fs::create_directories(dir);
  fmt::print(
      "{}: {} snippets, {} queries (made in {:.1f} s, not counted); {} indexing threads; machine: {} "
      "cores\n",
      corpus_in.empty() ? std::string("synthetic collection") : "corpus " + corpus_in, ndocs, nqueries, gen_s,
      threads, std::thread::hardware_concurrency());
  Result ours = in_child([&] { return run_ours(docs, ids, threads, dir, numbers); });
  {
    const Result q = in_child([&] { return query_ours(queries, dir); });
    ours.query_cpu_s = q.query_cpu_s;
    ours.queries_per_s = q.queries_per_s;
    ours.mean_hits = q.mean_hits;
    ours.exhaustive_qps = q.exhaustive_qps;
    ours.load_s = q.load_s;
    ours.load_cpu_s = q.load_cpu_s;
    ours.searcher_s = q.searcher_s;
    ours.query_peak_mb = q.query_peak_mb;
  }
  Result xap;
#if NUMCHECK_HAVE_XAPIAN
  if (xapian) xap = in_child([&] { return run_xapian(docs, ids, queries, dir); });
#else
  if (xapian) fmt::print("Xapian not built in (install libxapian-dev and reconfigure): numcheck alone\n");
  xapian = false;
#endif
  fs::remove_all(dir);
  fmt::print("{:<34} {:>14} {:>14}\n", "", "numcheck", xapian ? xapian_name() : "");
  auto row = [&](const char* name, double a, double b, const char* f) {
    fmt::print("{:<34} {:>14} {:>14}\n", name, fmt::format(fmt::runtime(f), a),
               xapian ? fmt::format(fmt::runtime(f), b) : "");
  };
  row("index: snippets/s (end to end)", ours.docs_per_s, xap.docs_per_s, "{:.0f}");
  row("index: seconds", ours.index_s, xap.index_s, "{:.2f}");
  row("index: CPU seconds (all threads)", ours.index_cpu_s, xap.index_cpu_s, "{:.2f}");
  row("index: snippets per CPU second", static_cast<double>(ndocs) / ours.index_cpu_s,
      static_cast<double>(ndocs) / xap.index_cpu_s, "{:.0f}");
  row("index: size on disk (MB)", ours.index_mb, xap.index_mb, "{:.1f}");
  row("top-100 queries/s (1 thread)", ours.queries_per_s, xap.queries_per_s, "{:.1f}");
  row("top-100 queries per CPU second", static_cast<double>(nqueries) / ours.query_cpu_s,
      static_cast<double>(nqueries) / xap.query_cpu_s, "{:.1f}");
  row("mean hits per query", ours.mean_hits, xap.mean_hits, "{:.1f}");
  row("peak memory (MB, whole child)", ours.peak_mb, xap.peak_mb, "{:.0f}");
  fmt::print("numcheck exhaustive (no pruning) top-100 queries/s: {:.1f}\n", ours.exhaustive_qps);
  fmt::print(
      "numcheck query process: index load {:.3f} s ({:.3f} CPU s; read, verify, decode tables), searcher "
      "setup {:.3f} s, resident memory of the loaded index and searcher {:.0f} MB\n",
      ours.load_s, ours.load_cpu_s, ours.searcher_s, ours.query_peak_mb);
  return 0;
}
