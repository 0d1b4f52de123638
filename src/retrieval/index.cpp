#include "retrieval/index.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zdict.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <limits>
#include <memory>
#include <numeric>
#include <type_traits>
#include <utility>

#include "core/error.hpp"
#include "core/ordered_parallel.hpp"
#include "core/string_set.hpp"
#include "io/files.hpp"
#include "io/ordered_bytes.hpp"
#include "io/sha256.hpp"

namespace numcheck::retrieval {

namespace {

static_assert(std::endian::native == std::endian::little, "the index file format is little-endian");

constexpr std::string_view kMagic = "NUMCHECK-RIDX\n";  // 14 bytes
constexpr std::uint32_t kFormatVersion = 3;  // 1: uncompressed postings, 2: uncompressed texts (refused)
constexpr std::size_t kHashHexBytes = 64;
std::atomic<std::uint64_t> g_serial{0};  // Index::serial_

// ---- writing ----
// The file's bytes go to a sink in pieces: small fields through a buffer the sink takes over
// (sink.take(std::string&&)), large tables (texts, postings) as views of the index's memory
// (sink.view(std::string_view)), so saving never builds a copy of the whole file.
template <class Sink>
struct Out {
  Sink& sink;
  std::string buf;
  void flush() {
    if (buf.empty()) return;
    std::string piece;
    piece.swap(buf);
    sink.take(std::move(piece));
  }
  void raw(std::string_view bytes) {
    if (bytes.size() >= (1u << 16)) {
      flush();
      sink.view(bytes);
      return;
    }
    if (buf.capacity() == 0) buf.reserve(1u << 20);
    buf += bytes;
    if (buf.size() >= (1u << 20)) flush();
  }
  void u32(std::uint32_t v) { raw({reinterpret_cast<const char*>(&v), 4}); }
  void u64(std::uint64_t v) { raw({reinterpret_cast<const char*>(&v), 8}); }
  void f64(double v) { raw({reinterpret_cast<const char*>(&v), 8}); }
  template <class Vec>
  void u32s(const Vec& v) {
    u64(v.size());
    raw({reinterpret_cast<const char*>(v.data()), v.size() * 4});
  }
  template <class Vec>
  void u64s(const Vec& v) {
    u64(v.size());
    raw({reinterpret_cast<const char*>(v.data()), v.size() * 8});
  }
  // A string table: count, count + 1 offsets, the bytes.
  void strings(const std::vector<std::uint64_t>& off, std::string_view bytes) {
    const std::uint64_t n = off.empty() ? 0 : off.size() - 1;
    u64(n);
    if (off.empty())
      u64(0);
    else
      raw({reinterpret_cast<const char*>(off.data()), off.size() * 8});
    raw(bytes);
  }
};

// ---- reading: every read is bounds-checked ----
struct In {
  std::string_view b;
  std::size_t pos = 0;
  std::string_view name;
  [[noreturn]] void bad(std::string_view what) const {
    fail("index file {} is truncated or corrupt ({} at byte {}); rebuild it with 'numcheck claims index'",
         name, what, pos);
  }
  void need(std::uint64_t n, std::string_view what) const {
    if (n > b.size() - pos) bad(what);
  }
  std::uint32_t u32(std::string_view what) {
    need(4, what);
    std::uint32_t v;
    std::memcpy(&v, b.data() + pos, 4);
    pos += 4;
    return v;
  }
  std::uint64_t u64(std::string_view what) {
    need(8, what);
    std::uint64_t v;
    std::memcpy(&v, b.data() + pos, 8);
    pos += 8;
    return v;
  }
  double f64(std::string_view what) {
    need(8, what);
    double v;
    std::memcpy(&v, b.data() + pos, 8);
    pos += 8;
    return v;
  }
  template <class T>
  std::vector<T> array(std::string_view what) {
    const std::uint64_t n = u64(what);
    if (n > (b.size() - pos) / sizeof(T)) bad(what);
    std::vector<T> v(n);
    if (n) std::memcpy(v.data(), b.data() + pos, n * sizeof(T));
    pos += n * sizeof(T);
    return v;
  }
  // A string table read in place: its offsets are checked, its bytes stay where they are (the
  // table's base is their position in the file).
  std::vector<std::uint64_t> strings(std::string_view what, std::uint64_t& base) {
    const std::uint64_t n = u64(what);
    if (n >= (b.size() - pos) / 8) bad(what);
    std::vector<std::uint64_t> off(n + 1);
    std::memcpy(off.data(), b.data() + pos, (n + 1) * 8);
    pos += (n + 1) * 8;
    if (off[0] != 0) bad(what);
    for (std::size_t i = 0; i < n; ++i)
      if (off[i + 1] < off[i]) bad(what);
    need(off[n], what);
    base = pos;
    pos += off[n];
    return off;
  }
};

// ---- the posting codec ----
// A block holds up to 128 postings of one term: a byte with the width of its document-number gaps,
// a byte with the width of its frequencies, then the gaps (document number minus the previous
// document number minus 1; the first relative to the previous block's last document, or to -1 in a
// term's first block) and the frequencies minus 1, each bit-packed at its width (least significant
// bit first, padded to a whole byte).
constexpr std::uint64_t packed_bytes(std::uint64_t n, unsigned bits) { return (n * bits + 7) / 8; }

unsigned bits_for(std::uint32_t v) { return v == 0 ? 0u : 32u - static_cast<unsigned>(std::countl_zero(v)); }

void pack(std::string& out, const std::uint32_t* v, std::uint32_t n, unsigned bits) {
  if (bits == 0) return;
  std::uint64_t acc = 0;
  unsigned have = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    acc |= static_cast<std::uint64_t>(v[i]) << have;
    have += bits;
    while (have >= 8) {
      out.push_back(static_cast<char>(acc & 0xFFu));
      acc >>= 8;
      have -= 8;
    }
  }
  if (have > 0) out.push_back(static_cast<char>(acc & 0xFFu));
}

// Reads n values of B bits; reads up to 7 bytes past the packed values (the index keeps at least
// 8 bytes after its last block).
template <unsigned B>
void unpack(const unsigned char* p, std::uint32_t n, std::uint32_t* out) {
  if constexpr (B == 0) {
    std::fill(out, out + n, 0u);
  } else {
    constexpr std::uint64_t kMask = (std::uint64_t{1} << B) - 1;
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::size_t bit = std::size_t{i} * B;
      std::uint64_t w;
      std::memcpy(&w, p + (bit >> 3), 8);
      out[i] = static_cast<std::uint32_t>((w >> (bit & 7)) & kMask);
    }
  }
}
using Unpacker = void (*)(const unsigned char*, std::uint32_t, std::uint32_t*);
template <std::size_t... I>
constexpr std::array<Unpacker, sizeof...(I)> unpackers(std::index_sequence<I...>) {
  return {&unpack<static_cast<unsigned>(I)>...};
}
constexpr auto kUnpack = unpackers(std::make_index_sequence<33>{});

// Appends one block (n postings; `prev_end` = the previous block's last document + 1, 0 for a
// term's first block).
void encode_block(std::string& out, const std::uint32_t* docs, const std::uint32_t* tfs, std::uint32_t n,
                  std::uint32_t prev_end) {
  std::array<std::uint32_t, Index::kBlock> gap{}, tf{};
  std::uint32_t gmax = 0, tmax = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    gap[i] = docs[i] - prev_end;
    prev_end = docs[i] + 1;
    tf[i] = tfs[i] - 1;
    gmax |= gap[i];
    tmax |= tf[i];
  }
  const unsigned bd = bits_for(gmax), bt = bits_for(tmax);
  out.push_back(static_cast<char>(bd));
  out.push_back(static_cast<char>(bt));
  pack(out, gap.data(), n, bd);
  pack(out, tf.data(), n, bt);
}

bool better(const Hit& a, const Hit& b) { return a.score > b.score || (a.score == b.score && a.doc < b.doc); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Index

namespace {

// Document numbers 0..n-1 sorted by id(d) (ties: lower number first); throws on a duplicate id.
template <class IdOf>
std::vector<std::uint32_t> sorted_by_id(std::size_t n, const IdOf& id) {
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const std::string_view x = id(a), y = id(b);
    return x < y || (x == y && a < b);
  });
  for (std::size_t i = 1; i < order.size(); ++i) {
    if (id(order[i]) == id(order[i - 1]))
      fail("duplicate document id '{}' (documents {} and {}); ids must be unique", id(order[i]),
           order[i - 1] + 1, order[i] + 1);
  }
  return order;
}

}  // namespace

void Index::finish() {
  finish(sorted_by_id(doc_ids_.size(), [&](std::uint32_t d) -> std::string_view { return doc_id(d); }));
}

void Index::finish(std::vector<std::uint32_t> id_order) {
  serial_ = ++g_serial;
  std::uint64_t total = 0;
  for (auto l : doc_len_) total += l;
  avgdl_ = (doc_len_.empty() || total == 0)
               ? 1.0
               : static_cast<double>(total) / static_cast<double>(doc_len_.size());
  id_order_ = std::move(id_order);
}

std::optional<std::uint32_t> Index::doc_number(std::string_view id) const {
  auto it = std::lower_bound(id_order_.begin(), id_order_.end(), id,
                             [&](std::uint32_t d, std::string_view x) { return doc_id(d) < x; });
  if (it == id_order_.end() || doc_id(*it) != id) return std::nullopt;
  return *it;
}

std::optional<std::uint32_t> Index::term(std::string_view t) const {
  std::size_t lo = 0, hi = terms_.size();
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (term_text(static_cast<std::uint32_t>(mid)) < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == terms_.size() || term_text(static_cast<std::uint32_t>(lo)) != t) return std::nullopt;
  return static_cast<std::uint32_t>(lo);
}

void Index::derive_blocks() {
  term_block_.resize(term_off_.size());
  std::uint32_t b = 0;
  for (std::size_t t = 0; t + 1 < term_off_.size(); ++t) {
    term_block_[t] = b;
    b += (term_off_[t + 1] - term_off_[t] + kBlock - 1) / kBlock;
  }
  term_block_.back() = b;
}

std::uint32_t Index::decode_block(std::uint32_t t, std::uint32_t b, std::uint32_t* docs,
                                  std::uint32_t* tfs) const {
  const std::uint32_t first = term_block_[t];
  const std::uint32_t n = b + 1 < term_block_[t + 1] ? kBlock : df(t) - (b - first) * kBlock;
  const auto* p = reinterpret_cast<const unsigned char*>(store_.data()) + blocks_base_ + block_off_[b];
  const unsigned bd = p[0], bt = p[1];
  kUnpack[bd](p + 2, n, docs);
  kUnpack[bt](p + 2 + packed_bytes(n, bd), n, tfs);
  std::uint32_t next = b == first ? 0 : block_last_[b - 1] + 1;
  for (std::uint32_t i = 0; i < n; ++i) {
    docs[i] += next;
    next = docs[i] + 1;
    tfs[i] += 1;
  }
  return n;
}

Index::PostingList Index::postings(std::uint32_t t) const {
  PostingList pl;
  pl.docs.resize(df(t));
  pl.tfs.resize(df(t));
  std::size_t at = 0;
  for (std::uint32_t b = first_block(t); b < end_block(t); ++b)
    at += decode_block(t, b, pl.docs.data() + at, pl.tfs.data() + at);
  return pl;
}

bool Index::contains(std::uint32_t t, std::uint32_t d) const {
  const auto* first = block_last_.data() + first_block(t);
  const auto* last = block_last_.data() + end_block(t);
  const auto* it = std::lower_bound(first, last, d);
  if (it == last) return false;
  std::array<std::uint32_t, kBlock> docs, tfs;
  const std::uint32_t n =
      decode_block(t, static_cast<std::uint32_t>(it - block_last_.data()), docs.data(), tfs.data());
  return std::binary_search(docs.data(), docs.data() + n, d);
}

// ---- the stored documents ----
// Consecutive documents go into one block until it holds kTextBlockBytes (a document larger than
// that gets a block of its own); blocks are compressed one by one (zstd level kTextLevel) with a
// dictionary trained on a sample of them, so that a text costs one small block's decompression.
namespace {

constexpr std::size_t kTextBlockBytes = 16u << 10;
constexpr int kTextLevel = 6;
constexpr std::size_t kDictBytes = 64u << 10;      // at most; and at most 1/64 of the sample
constexpr std::size_t kDictSample = 8u << 20;      // bytes of blocks the dictionary is trained on
constexpr std::uint64_t kMaxExpansion = 1u << 16;  // raw bytes per compressed byte, at most (zstd: < 2^15)

struct BlockCache {
  std::uint64_t serial = 0;  // 0: empty
  std::uint32_t block = 0;
  std::string raw;
};
thread_local BlockCache t_block;

struct FreeDctx {
  void operator()(ZSTD_DCtx* c) const { ZSTD_freeDCtx(c); }
};
struct FreeCctx {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct FreeCdict {
  void operator()(ZSTD_CDict* c) const { ZSTD_freeCDict(c); }
};

ZSTD_DCtx* thread_dctx() {
  thread_local std::unique_ptr<ZSTD_DCtx, FreeDctx> dctx(ZSTD_createDCtx());
  if (!dctx) throw std::bad_alloc();
  return dctx.get();
}

std::shared_ptr<ZSTD_DDict_s> make_ddict(std::string_view dict) {
  if (dict.empty()) return nullptr;
  ZSTD_DDict* d = ZSTD_createDDict(dict.data(), dict.size());
  if (d == nullptr) throw std::bad_alloc();
  return {d, [](ZSTD_DDict* x) { ZSTD_freeDDict(x); }};
}

}  // namespace

std::uint64_t Index::text_raw_bytes() const {
  std::uint64_t total = 0;
  for (const auto r : text_raw_) total += r;
  return total;
}

std::pair<std::string_view, std::string_view> Index::doc_fields(std::uint32_t d) const {
  if (d >= num_docs()) fail("document {} is not in the index ({} documents)", d, num_docs());
  const auto k = static_cast<std::uint32_t>(std::upper_bound(text_first_.begin(), text_first_.end(), d) -
                                            text_first_.begin() - 1);
  BlockCache& c = t_block;
  const std::uint32_t first = text_first_[k], m = text_first_[k + 1] - first;
  auto damaged = [&](std::string_view what) {
    c.serial = 0;
    fail("index is damaged: text block {} ({}); rebuild it with 'numcheck claims index'", k, what);
  };
  if (c.serial != serial_ || c.block != k) {
    c.serial = 0;
    c.raw.resize(text_raw_[k]);
    const char* src = store_.data() + text_base_ + text_off_[k];
    const std::size_t csize = text_off_[k + 1] - text_off_[k];
    const std::size_t got =
        ddict_
            ? ZSTD_decompress_usingDDict(thread_dctx(), c.raw.data(), c.raw.size(), src, csize, ddict_.get())
            : ZSTD_decompressDCtx(thread_dctx(), c.raw.data(), c.raw.size(), src, csize);
    if (ZSTD_isError(got)) damaged(ZSTD_getErrorName(got));
    if (got != c.raw.size()) damaged("shorter than recorded");
    // The layout: 2 m lengths, then the bytes they add up to.
    std::uint64_t total = std::uint64_t{8} * m;
    if (total > c.raw.size()) damaged("lengths");
    for (std::uint32_t j = 0; j < 2 * m; ++j) {
      std::uint32_t len;
      std::memcpy(&len, c.raw.data() + 4 * std::size_t{j}, 4);
      total += len;
    }
    if (total != c.raw.size()) damaged("lengths");
    c.serial = serial_;
    c.block = k;
  }
  std::size_t at = std::size_t{8} * m;
  std::uint32_t len[2] = {0, 0};
  for (std::uint32_t j = 0; j <= d - first; ++j) {
    std::memcpy(len, c.raw.data() + 8 * std::size_t{j}, 8);
    if (j < d - first) at += std::size_t{len[0]} + len[1];
  }
  const std::string_view raw(c.raw);
  return {raw.substr(at, len[0]), raw.substr(at + len[0], len[1])};
}

std::string Index::doc_text(std::uint32_t d) const { return std::string(doc_fields(d).first); }
std::string Index::doc_meta(std::uint32_t d) const { return std::string(doc_fields(d).second); }

template <class Sink>
void Index::write_body(Sink& sink) const {
  Out<Sink> o{sink, {}};
  o.raw(kMagic);
  o.u32(kFormatVersion);
  o.u32((tok_.stem ? 1u : 0u) | (tok_.number_terms ? 2u : 0u));
  o.f64(avgdl_);
  const std::string_view store(store_.data(), store_.size());
  auto strings = [&](const Strings& s) {
    o.strings(s.off, store.substr(s.base, s.off.empty() ? 0 : s.off.back()));
  };
  strings(doc_ids_);
  o.u32s(id_order_);
  o.u32s(doc_len_);
  o.u32s(text_first_);
  o.u32s(text_raw_);
  o.u64s(text_off_);
  o.u64(dict_size_);
  o.raw(store.substr(dict_base_, dict_size_));
  o.u64(text_bytes());
  o.raw(store.substr(text_base_, text_bytes()));
  strings(terms_);
  o.u32s(term_off_);
  o.u32s(block_last_);
  o.u64s(block_off_);
  o.u64(posting_bytes());
  o.raw(store.substr(blocks_base_, posting_bytes()));
  o.flush();
}

std::string Index::serialize() const {
  struct Append {
    std::string s;
    void view(std::string_view b) { s += b; }
    void take(std::string&& b) { s += b; }
  } sink;
  write_body(sink);
  sink.s += io::sha256_hex(sink.s);
  return std::move(sink.s);
}

void Index::save(const std::filesystem::path& path) const {
  // Streamed (the same bytes as serialize()): this thread writes the pieces while io::OrderedBytes
  // hashes them on a second thread, so hashing costs no time of its own. Pieces write_body hands
  // over (rather than views of the index's own bytes) are kept until hashed; at most kMaxQueued
  // pieces wait for the hasher.
  io::AtomicFile f(path);  // writes in 1 MiB slices and starts the disk writes as it goes
  constexpr std::size_t kMaxQueued = 16;
  io::Sha256 sha;
  const std::function<void(std::string_view)> hash = [&sha](std::string_view b) { sha.update(b); };
  std::deque<std::pair<std::size_t, std::string>> owned;  // (piece number, bytes) until hashed
  std::size_t pushed = 0;
  io::OrderedBytes hasher(hash);  // after what it reads: destroyed (joined) first
  const auto put = [&](std::string_view b) {
    f.write(b);
    hasher.push(b);
    ++pushed;
    if (pushed <= kMaxQueued) return;
    hasher.wait(pushed - kMaxQueued);
    while (!owned.empty() && owned.front().first < pushed - kMaxQueued) owned.pop_front();
  };
  struct Sink {
    std::function<void(std::string_view)> view;
    std::function<void(std::string&&)> take;
  } sink{put, [&](std::string&& b) {
           owned.emplace_back(pushed, std::move(b));
           put(owned.back().second);
         }};
  write_body(sink);
  hasher.wait(pushed);
  f.write(sha.hex_digest());
  f.commit();
}

namespace {

// The stored id order must be a permutation of the documents in strictly increasing id order
// (which also says the ids are distinct): n comparisons instead of a sort.
void check_id_order(const Index& ix, const std::vector<std::uint32_t>& order, const In& in) {
  std::vector<bool> seen(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::uint32_t d = order[i];
    if (d >= order.size() || seen[d]) in.bad("id order");
    seen[d] = true;
    if (i > 0 && !(ix.doc_id(order[i - 1]) < ix.doc_id(d))) in.bad("id order");
  }
}

}  // namespace

// The text blocks' tables and bytes and the dictionary; the blocks themselves are checked when
// they are decompressed (doc_fields).
template <class Reader>
void Index::read_texts(Index& ix, Reader& in) {
  const std::size_t n = ix.doc_len_.size();
  ix.text_first_ = in.template array<std::uint32_t>("text blocks");
  ix.text_raw_ = in.template array<std::uint32_t>("text block sizes");
  ix.text_off_ = in.template array<std::uint64_t>("text block offsets");
  const std::size_t nb = ix.text_raw_.size();
  if (ix.text_first_.size() != nb + 1 || ix.text_off_.size() != nb + 1 || ix.text_first_.front() != 0 ||
      ix.text_first_.back() != n || ix.text_off_.front() != 0)
    in.bad("text block tables disagree");
  for (std::size_t k = 0; k < nb; ++k) {
    const std::uint64_t m = ix.text_first_[k + 1] - std::uint64_t{ix.text_first_[k]};
    if (ix.text_first_[k + 1] <= ix.text_first_[k] || ix.text_off_[k + 1] < ix.text_off_[k] ||
        ix.text_raw_[k] < 8 * m ||
        ix.text_raw_[k] > (ix.text_off_[k + 1] - ix.text_off_[k] + 1) * kMaxExpansion)
      in.bad("text block tables disagree");
  }
  ix.dict_size_ = in.u64("text dictionary");
  in.need(ix.dict_size_, "text dictionary");
  ix.dict_base_ = in.pos;
  in.pos += ix.dict_size_;
  const std::uint64_t nbytes = in.u64("text blocks");
  in.need(nbytes, "text blocks");
  if (nbytes != ix.text_off_.back()) in.bad("text block tables disagree");
  ix.text_base_ = in.pos;
  in.pos += nbytes;
  ix.ddict_ = make_ddict(std::string_view(ix.store_.data() + ix.dict_base_, ix.dict_size_));
}

Index Index::load(const std::filesystem::path& path) {
  // Read straight into memory of the index's own (2 MiB pages, not zero-filled first).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(ErrorCode::kIo, "cannot read {}: {}", path.string(), std::strerror(errno));
  detail::Bytes bytes;
  try {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
      fail(ErrorCode::kIo, "cannot read {}: not a regular file", path.string());
    bytes.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < bytes.size()) {
      const ::ssize_t r = ::read(fd, bytes.data() + got, std::min<std::size_t>(bytes.size() - got, 8u << 20));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0)
        fail(ErrorCode::kIo, "error while reading {}: {}", path.string(),
             r < 0 ? std::strerror(errno) : "file shrank");
      got += static_cast<std::size_t>(r);
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return parse_owned(std::move(bytes), path.string(), true);
}

Index Index::parse(std::string_view bytes, std::string_view name, bool verify_checksum) {
  return parse_owned(detail::Bytes(bytes.begin(), bytes.end()), name, verify_checksum);
}

Index Index::parse_owned(detail::Bytes file, std::string_view name, bool verify_checksum) {
  // The tables are read in place: the index keeps the file's bytes (and reads through offsets,
  // so copies of the index are fine too).
  Index ix;
  ix.store_ = std::move(file);
  const std::string_view bytes(ix.store_.data(), ix.store_.size());
  In in{bytes, 0, name};
  if (bytes.size() < kMagic.size() + kHashHexBytes || bytes.substr(0, kMagic.size()) != kMagic) {
    in.bad(bytes.size() < kMagic.size() + kHashHexBytes ? "too short" : "not a numcheck index");
  }
  const std::string_view body = bytes.substr(0, bytes.size() - kHashHexBytes);
  // The checksum is computed on a second thread while this one checks the structure; a mismatch
  // is the error reported whatever the structure showed.
  std::future<bool> sum_ok;
  if (verify_checksum)
    sum_ok =
        std::async(std::launch::async, [&] { return io::sha256_hex(body) == bytes.substr(body.size()); });
  auto checksum_mismatch = [&] {
    In at{bytes, body.size(), name};
    at.bad("checksum mismatch");
  };
  // The structure, every table and block (after the blocks come the 64 checksum bytes: the
  // decoder's slack).
  std::vector<std::uint32_t> id_order;
  auto check = [&] {
    in.b = body;
    in.pos = kMagic.size();
    if (const auto v = in.u32("version"); v != kFormatVersion)
      fail(
          "index file {} has format version {} ({}), this numcheck reads version {}: rebuild it with "
          "'numcheck claims index' (the same --corpus/--gold arguments and --out)",
          name, v,
          v == 1   ? "uncompressed postings"
          : v == 2 ? "uncompressed texts"
                   : "unknown",
          kFormatVersion);
    const std::uint32_t flags = in.u32("flags");
    if (flags > 3) in.bad("unknown flags");
    ix.tok_.stem = (flags & 1u) != 0;
    ix.tok_.number_terms = (flags & 2u) != 0;
    ix.avgdl_ = in.f64("avgdl");
    ix.doc_ids_.off = in.strings("document ids", ix.doc_ids_.base);
    id_order = in.array<std::uint32_t>("id order");
    ix.doc_len_ = in.array<std::uint32_t>("document lengths");
    const std::size_t n = ix.doc_ids_.size();
    if (id_order.size() != n || ix.doc_len_.size() != n || n > 0xFFFFFFF0u)
      in.bad("document tables disagree");
    check_id_order(ix, id_order, in);
    read_texts(ix, in);
    ix.terms_.off = in.strings("terms", ix.terms_.base);
    const std::size_t nt = ix.terms_.size();
    for (std::size_t i = 1; i < nt; ++i) {
      const std::string_view a(bytes.data() + ix.terms_.base + ix.terms_.off[i - 1],
                               ix.terms_.off[i] - ix.terms_.off[i - 1]);
      const std::string_view c(bytes.data() + ix.terms_.base + ix.terms_.off[i],
                               ix.terms_.off[i + 1] - ix.terms_.off[i]);
      if (!(a < c)) in.bad("terms out of order");
    }
    ix.term_off_ = in.array<std::uint32_t>("term offsets");
    ix.block_last_ = in.array<std::uint32_t>("block last documents");
    ix.block_off_ = in.array<std::uint64_t>("block offsets");
    const std::uint64_t nbytes = in.u64("posting blocks");
    in.need(nbytes, "posting blocks");
    ix.blocks_base_ = in.pos;
    in.pos += nbytes;
    if (in.pos != body.size()) in.bad("trailing bytes");
    if (ix.term_off_.size() != nt + 1 || ix.term_off_.front() != 0) in.bad("posting tables disagree");
    // Offsets first (strictly increasing from 0), so that no posting list below reaches past the
    // tables even when a later offset is the one that is wrong.
    for (std::size_t t = 0; t < nt; ++t)
      if (ix.term_off_[t + 1] <= ix.term_off_[t]) in.bad("empty or negative posting list");
    ix.derive_blocks();
    const std::size_t nb = ix.term_block_.back();
    if (ix.block_last_.size() != nb || ix.block_off_.size() != nb + 1 || ix.block_off_.front() != 0 ||
        ix.block_off_.back() != nbytes)
      in.bad("block tables disagree");
    // Every block once: its size from its header must be its place in the offsets, and its postings
    // must be in order, in range, with frequencies of at least 1, ending at its recorded last
    // document. Queries decode blocks without checks after this.
    std::array<std::uint32_t, kBlock> docs{}, tfs{};
    const auto* base = reinterpret_cast<const unsigned char*>(bytes.data()) + ix.blocks_base_;
    for (std::uint32_t t = 0; t < nt; ++t) {
      for (std::uint32_t b = ix.term_block_[t]; b < ix.term_block_[t + 1]; ++b) {
        const std::uint64_t at = ix.block_off_[b], end = ix.block_off_[b + 1];
        if (end < at || end - at < 2) in.bad("posting block size");
        const unsigned bd = base[at], bt = base[at + 1];
        const std::uint32_t m =
            b + 1 < ix.term_block_[t + 1] ? kBlock : ix.df(t) - (b - ix.term_block_[t]) * kBlock;
        if (bd > 32 || bt > 32 || end - at != 2 + packed_bytes(m, bd) + packed_bytes(m, bt))
          in.bad("posting block size");
        (void)ix.decode_block(t, b, docs.data(), tfs.data());
        for (std::uint32_t i = 0; i < m; ++i) {
          const bool after =
              i > 0 ? docs[i] > docs[i - 1] : (b == ix.term_block_[t] || docs[0] > ix.block_last_[b - 1]);
          if (!after || docs[i] >= n || tfs[i] == 0) in.bad("posting out of range or order");
        }
        if (docs[m - 1] != ix.block_last_[b]) in.bad("block's last document");
      }
    }
    std::uint64_t total = 0;
    for (auto l : ix.doc_len_) total += l;
    const double avg = (n == 0 || total == 0) ? 1.0 : static_cast<double>(total) / static_cast<double>(n);
    if (!(ix.avgdl_ == avg)) in.bad("average document length");
  };
  try {
    check();
  } catch (...) {
    if (sum_ok.valid() && !sum_ok.get()) checksum_mismatch();
    throw;
  }
  if (sum_ok.valid() && !sum_ok.get()) checksum_mismatch();
  ix.finish(std::move(id_order));
  return ix;
}

// ---------------------------------------------------------------------------------------------
// IndexBuilder

namespace {

// Runs fn(0) .. fn(t - 1) on t threads (the calling one among them) and waits; rethrows the first
// exception (core::parallel_for).
template <class Fn>
void parallel(unsigned t, Fn&& fn) {
  core::parallel_for(t, t, [&fn](std::size_t i) { fn(static_cast<unsigned>(i)); });
}

std::uint64_t hash_term(std::string_view t) { return short_string_hash(t); }

// A worker's term dictionary: open addressing with linear probing over a power-of-two table of
// cache-line slots, at most half full. A slot holds everything a term occurrence touches (the key
// itself when it is short, the local id, the document frequency, where the term's posting of the
// current document is), so an occurrence costs one cache line, and the lookups of a document are
// prefetched together. Keys are also kept in an arena by local id (for the vocabulary sort).
class TermTable {
 public:
  static constexpr std::size_t kInline = 36;
  struct alignas(64) Slot {
    std::uint64_t hash = 0;
    std::uint32_t id = kEmpty;
    std::uint32_t last_doc = 0;  // worker document serial + 1 of the term's last document
    std::uint32_t pair = 0;      // index of that document's posting in the current chunk
    std::uint32_t df = 0;
    std::uint16_t len = 0;
    std::uint8_t number_like = 2;  // 0 / 1, 2 = not known (words whose term decides it)
    std::uint8_t pad = 0;
    char key[kInline] = {};  // the key when len <= kInline, else unused (compared in the arena)
  };
  static_assert(sizeof(Slot) == 64);
  static constexpr std::uint32_t kEmpty = 0xFFFFFFFFu;

  TermTable() : slots_(std::size_t{1} << 16), mask_(slots_.size() - 1) {}
  void prefetch(std::uint64_t h) const { __builtin_prefetch(&slots_[h & mask_]); }
  // The slot of term t (hash h), inserted when new.
  Slot& get(std::string_view t, std::uint64_t h) {
    std::size_t i = h & mask_;
    for (;;) {
      Slot& x = slots_[i];
      if (x.id == kEmpty) break;
      if (x.hash == h && x.len == t.size() && same(x, t)) return x;
      i = (i + 1) & mask_;
    }
    if ((count() + 1) * 2 > slots_.size()) {
      grow();
      return get(t, h);
    }
    Slot& x = slots_[i];
    x.hash = h;
    x.id = static_cast<std::uint32_t>(count());
    x.len = static_cast<std::uint16_t>(t.size());
    if (t.size() <= kInline) std::memcpy(x.key, t.data(), t.size());
    arena_.append(t);
    key_end_.push_back(arena_.size());
    return x;
  }
  [[nodiscard]] std::size_t count() const { return key_end_.size(); }
  [[nodiscard]] std::string_view key(std::uint32_t id) const {
    const std::size_t b = id ? key_end_[id - 1] : 0;
    return std::string_view(arena_).substr(b, key_end_[id] - b);
  }
  // Document frequency by local id.
  [[nodiscard]] std::vector<std::uint32_t> dfs() const {
    std::vector<std::uint32_t> df(count());
    for (const Slot& x : slots_)
      if (x.id != kEmpty) df[x.id] = x.df;
    return df;
  }

 private:
  bool same(const Slot& x, std::string_view t) const {
    const char* k = t.size() <= kInline ? x.key : arena_.data() + (x.id ? key_end_[x.id - 1] : 0);
    for (std::size_t j = 0; j < t.size(); ++j)  // words are short: a plain loop beats memcmp
      if (k[j] != t[j]) return false;
    return true;
  }
  using Slots = std::vector<Slot, detail::DefaultInitAllocator<Slot>>;  // large: map_large
  void grow() {
    Slots old(slots_.size() * 2);
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    for (const Slot& x : old) {
      if (x.id == kEmpty) continue;
      std::size_t i = x.hash & mask_;
      while (slots_[i].id != kEmpty) i = (i + 1) & mask_;
      slots_[i] = x;
    }
  }
  Slots slots_;
  std::size_t mask_;
  std::string arena_;
  std::vector<std::size_t> key_end_;
};

// A growing array of a trivially copyable type in memory of its own (detail::map_large), grown by
// mremap(2): growing never copies the elements.
template <class T>
class GrowingArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  GrowingArray() = default;
  GrowingArray(const GrowingArray&) = delete;
  GrowingArray& operator=(const GrowingArray&) = delete;
  GrowingArray(GrowingArray&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), size_(std::exchange(o.size_, 0)), cap_(std::exchange(o.cap_, 0)) {}
  GrowingArray& operator=(GrowingArray&&) = delete;
  ~GrowingArray() {
    if (p_ != nullptr) detail::unmap_large(p_, cap_ * sizeof(T));
  }
  void push_back(const T& v) {
    if (size_ == cap_) grow();
    p_[size_++] = v;
  }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] T* data() { return p_; }
  T& operator[](std::size_t i) { return p_[i]; }

 private:
  void grow() {
    const std::size_t cap = cap_ != 0 ? cap_ * 2 : detail::kLargeArrayBytes / sizeof(T);
    if (p_ == nullptr) {
      p_ = static_cast<T*>(detail::map_large(cap * sizeof(T)));
    } else {
      void* q = ::mremap(p_, cap_ * sizeof(T), cap * sizeof(T), MREMAP_MAYMOVE);
      if (q == MAP_FAILED) throw std::bad_alloc();
      p_ = static_cast<T*>(q);
    }
    cap_ = cap;
  }
  T* p_ = nullptr;
  std::size_t size_ = 0, cap_ = 0;
};

// A big-endian 8-byte prefix: comparing two of them orders terms like their bytes, up to ties.
std::uint64_t prefix_key(std::string_view t) {
  unsigned char b[8] = {};
  std::memcpy(b, t.data(), std::min<std::size_t>(8, t.size()));
  std::uint64_t v = 0;
  for (unsigned char c : b) v = (v << 8) | c;
  return v;
}

// The documents' texts and metadata in compressed blocks (the layout of Index::doc_fields).
struct CompressedTexts {
  std::vector<std::uint32_t> first{0}, raw;
  std::vector<std::string> blocks;
  std::string dict;
};

template <class Docs>
void raw_block(const Docs& docs, std::size_t begin, std::size_t end, std::string& out) {
  out.clear();
  for (std::size_t d = begin; d < end; ++d) {
    const auto lens = std::array{static_cast<std::uint32_t>(docs[d].text.size()),
                                 static_cast<std::uint32_t>(docs[d].meta.size())};
    out.append(reinterpret_cast<const char*>(lens.data()), 8);
  }
  for (std::size_t d = begin; d < end; ++d) {
    out += docs[d].text;
    out += docs[d].meta;
  }
}

template <class Docs>
CompressedTexts compress_texts(const Docs& docs, unsigned threads) {
  CompressedTexts ct;
  std::uint64_t raw = 0, total = 0;
  for (std::size_t d = 0; d < docs.size(); ++d) {
    raw += 8 + docs[d].text.size() + docs[d].meta.size();
    if (raw >= kTextBlockBytes || d + 1 == docs.size()) {
      if (raw > 0xFFFFFFFFu)
        fail("document {} ('{}') is too large to store: {} bytes", d + 1, docs[d].id, raw);
      ct.first.push_back(static_cast<std::uint32_t>(d + 1));
      ct.raw.push_back(static_cast<std::uint32_t>(raw));
      total += raw;
      raw = 0;
    }
  }
  const std::size_t nb = ct.raw.size();
  // The dictionary: trained on every stride-th block (about kDictSample bytes in all); none when
  // the sample is small or zstd finds nothing to train on.
  {
    const std::uint64_t stride = std::max<std::uint64_t>(1, (total + kDictSample - 1) / kDictSample);
    std::string sample, block;
    std::vector<std::size_t> sizes;
    for (std::size_t k = 0; k < nb; k += stride) {
      raw_block(docs, ct.first[k], ct.first[k + 1], block);
      sample += block;
      sizes.push_back(block.size());
    }
    const std::size_t cap = std::min(kDictBytes, sample.size() / 64);
    if (sizes.size() >= 8 && cap >= 1024) {
      ct.dict.resize(cap);
      const std::size_t got = ZDICT_trainFromBuffer(ct.dict.data(), cap, sample.data(), sizes.data(),
                                                    static_cast<unsigned>(sizes.size()));
      ct.dict.resize(ZDICT_isError(got) ? 0 : got);
    }
  }
  std::unique_ptr<ZSTD_CDict, FreeCdict> cdict;
  if (!ct.dict.empty()) {
    cdict.reset(ZSTD_createCDict(ct.dict.data(), ct.dict.size(), kTextLevel));
    if (!cdict) throw std::bad_alloc();
  }
  ct.blocks.resize(nb);
  // Each frame carries zstd's checksum of its contents: a damaged block is an error when read.
  core::parallel_for(nb, threads, [&](std::size_t k) {
    thread_local std::unique_ptr<ZSTD_CCtx, FreeCctx> cctx(ZSTD_createCCtx());
    thread_local std::string block;
    if (!cctx) throw std::bad_alloc();
    ZSTD_CCtx_reset(cctx.get(), ZSTD_reset_session_and_parameters);
    ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, kTextLevel);
    ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_checksumFlag, 1);
    if (cdict) ZSTD_CCtx_refCDict(cctx.get(), cdict.get());
    raw_block(docs, ct.first[k], ct.first[k + 1], block);
    std::string& out = ct.blocks[k];
    out.resize(ZSTD_compressBound(block.size()));
    const std::size_t got = ZSTD_compress2(cctx.get(), out.data(), out.size(), block.data(), block.size());
    if (ZSTD_isError(got)) fail("cannot compress the documents' texts: {}", ZSTD_getErrorName(got));
    out.resize(got);
    out.shrink_to_fit();
  });
  return ct;
}

}  // namespace

Index IndexBuilder::build(unsigned threads) {
  threads = static_cast<unsigned>(core::thread_count(threads));
  if (docs_.size() >= 0xFFFFFFF0u) fail("too many documents for one index ({})", docs_.size());
  Index ix;
  ix.tok_ = tok_;
  const std::size_t n = docs_.size();
  ix.doc_len_.resize(n);
  // The id order (and the duplicate-id check) needs only the ids: with two or more threads it is
  // sorted beside the tokenizing instead of after it. The ids stay in docs_ until it is done.
  auto id_order = std::async(threads > 1 ? std::launch::async : std::launch::deferred, [this, n] {
    return sorted_by_id(n, [this](std::uint32_t d) -> std::string_view { return docs_[d].id; });
  });

  // 1. Workers take chunks of documents in turn (whichever is free takes the next), tokenize them
  // and map every term to their own local id, and record per chunk its (local id, tf) pairs in
  // document order. Which worker took which chunk changes the local ids, never the index: the
  // global term ids are the terms' byte order and postings go in document order.
  constexpr std::size_t kChunkDocs = 1024;
  struct Chunk {
    unsigned worker = 0;
    std::size_t begin = 0;               // the chunk's first pair in its worker's pairs
    std::vector<std::uint32_t> doc_end;  // per document: end of its pairs (from `begin`)
  };
  struct Pair {
    std::uint32_t id, tf;  // per (term, document): local id (later global), tf
  };
  const std::size_t nchunks = (n + kChunkDocs - 1) / kChunkDocs;
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, std::max<std::size_t>(1, nchunks)));
  std::vector<Chunk> chunks(nchunks);
  std::vector<TermTable> tables(threads);
  // Each worker's pairs of all its chunks, one after another (its chunks in the order it took them).
  std::vector<GrowingArray<Pair>> pairs(threads);
  std::atomic<std::size_t> next_chunk{0};
  parallel(threads, [&](unsigned w) {
    TermTable& table = tables[w];
    GrowingArray<Pair>& prs = pairs[w];
    TermBuffer buf;
    std::vector<std::uint64_t> hashes;
    std::uint32_t serial = 0;
    for (;;) {
      const std::size_t c = next_chunk.fetch_add(1);
      if (c >= nchunks) break;
      Chunk& ch = chunks[c];
      ch.worker = w;
      ch.begin = prs.size();
      const std::size_t b = c * kChunkDocs, e = std::min(n, b + kChunkDocs);
      ch.doc_end.reserve(e - b);
      auto occur = [&](TermTable::Slot& x) {
        if (x.last_doc == serial) {
          ++prs[ch.begin + x.pair].tf;
        } else {
          x.last_doc = serial;
          x.pair = static_cast<std::uint32_t>(prs.size() - ch.begin);
          prs.push_back({x.id, 1});
          ++x.df;
        }
      };
      for (std::size_t d = b; d < e; ++d) {
        ++serial;
        const std::string_view text = docs_[d].text;
        analyze_words(text, tok_, buf);
        const std::size_t nw = buf.word_end.size();
        hashes.resize(nw);
        for (std::size_t i = 0; i < nw; ++i) hashes[i] = hash_term(buf.word(i));
        constexpr std::size_t kAhead = 8;  // lookups in flight: a few cache misses overlap
        for (std::size_t i = 0; i < std::min(nw, kAhead); ++i) table.prefetch(hashes[i]);
        for (std::size_t i = 0; i < nw; ++i) {
          if (i + kAhead < nw) table.prefetch(hashes[i + kAhead]);
          const std::string_view t = buf.word(i);
          TermTable::Slot& x = table.get(t, hashes[i]);
          if (tok_.number_terms) {
            if (buf.term_keyed[i]) {
              if (x.number_like == 2) x.number_like = number_like_word(t) ? 1 : 0;
              buf.number_like[buf.word_range[i]] = x.number_like;
            }
          }
          occur(x);
        }
        analyze_numbers(text, tok_, buf);
        for (std::size_t i = 0; i < buf.number_end.size(); ++i) {
          const std::string_view t = buf.number(i);
          occur(table.get(t, hash_term(t)));
        }
        ix.doc_len_[d] = buf.length;
        if (prs.size() - ch.begin >= 0xFFFFFFF0u) fail("too many postings for one index");
        ch.doc_end.push_back(static_cast<std::uint32_t>(prs.size() - ch.begin));
      }
    }
  });

  // 2. The vocabulary in byte order: each worker sorts its own terms (in parallel), then a linear
  // merge gives every term its global id (its rank) and each worker its local -> global map.
  struct Ranked {
    std::uint64_t prefix;
    std::uint32_t id;
  };
  std::vector<std::vector<Ranked>> sorted(threads);
  std::vector<std::vector<std::uint32_t>> local_df(threads);
  parallel(threads, [&](unsigned w) {
    const TermTable& t = tables[w];
    auto& v = sorted[w];
    v.resize(t.count());
    for (std::uint32_t i = 0; i < v.size(); ++i) v[i] = {prefix_key(t.key(i)), i};
    std::sort(v.begin(), v.end(), [&t](const Ranked& a, const Ranked& b) {
      if (a.prefix != b.prefix) return a.prefix < b.prefix;
      return t.key(a.id) < t.key(b.id);
    });
    local_df[w] = t.dfs();
  });
  // The merge runs in `threads` parts of the byte order (split at terms of the largest worker's
  // sorted list; a term falls in the same part for every worker), each numbering its terms from 0;
  // then each part's ids are shifted by the number of terms in the parts before it.
  std::vector<std::vector<std::uint32_t>> l2g(threads);
  for (unsigned w = 0; w < threads; ++w) l2g[w].resize(tables[w].count());
  std::vector<std::uint32_t> df;
  std::vector<std::string> ix_terms;
  {
    const unsigned parts = threads;
    unsigned big = 0;
    for (unsigned w = 1; w < threads; ++w)
      if (sorted[w].size() > sorted[big].size()) big = w;
    // bound[p][w]: where part p starts in worker w's sorted terms (bound[parts][w] = its end).
    std::vector<std::vector<std::size_t>> bound(parts + 1, std::vector<std::size_t>(threads, 0));
    for (unsigned w = 0; w < threads; ++w) bound[parts][w] = sorted[w].size();
    for (unsigned p = 1; p < parts && !sorted[big].empty(); ++p) {
      const Ranked& split = sorted[big][sorted[big].size() * p / parts];
      const std::string_view sk = tables[big].key(split.id);
      for (unsigned w = 0; w < threads; ++w) {
        const TermTable& t = tables[w];
        bound[p][w] = static_cast<std::size_t>(
            std::lower_bound(sorted[w].begin(), sorted[w].end(), split,
                             [&](const Ranked& r, const Ranked& x) {
                               return r.prefix < x.prefix || (r.prefix == x.prefix && t.key(r.id) < sk);
                             }) -
            sorted[w].begin());
      }
    }
    std::vector<std::vector<std::string>> part_terms(parts);
    std::vector<std::vector<std::uint32_t>> part_df(parts);
    parallel(parts, [&](unsigned p) {
      std::vector<std::size_t> head = bound[p];
      const std::vector<std::size_t>& stop = bound[p + 1];
      auto& terms = part_terms[p];
      auto& dfs = part_df[p];
      for (;;) {
        // The smallest head term; every worker holding it maps it to the same new id.
        int best = -1;
        std::string_view bt;
        std::uint64_t bp = 0;
        for (unsigned w = 0; w < threads; ++w) {
          if (head[w] == stop[w]) continue;
          const Ranked& r = sorted[w][head[w]];
          if (best < 0 || r.prefix < bp || (r.prefix == bp && tables[w].key(r.id) < bt)) {
            best = static_cast<int>(w);
            bp = r.prefix;
            bt = tables[w].key(r.id);
          }
        }
        if (best < 0) break;
        const auto g = static_cast<std::uint32_t>(terms.size());
        terms.emplace_back(bt);
        std::uint32_t f = 0;
        for (unsigned w = 0; w < threads; ++w) {
          if (head[w] == stop[w]) continue;
          const Ranked& r = sorted[w][head[w]];
          if (r.prefix != bp || tables[w].key(r.id) != bt) continue;
          l2g[w][r.id] = g;
          f += local_df[w][r.id];
          ++head[w];
        }
        dfs.push_back(f);
      }
    });
    std::vector<std::uint32_t> first(parts + 1, 0);
    for (unsigned p = 0; p < parts; ++p)
      first[p + 1] = first[p] + static_cast<std::uint32_t>(part_terms[p].size());
    parallel(parts, [&](unsigned p) {
      if (first[p] == 0) return;
      for (unsigned w = 0; w < threads; ++w)
        for (std::size_t i = bound[p][w]; i < bound[p + 1][w]; ++i) l2g[w][sorted[w][i].id] += first[p];
    });
    ix_terms.reserve(first[parts]);
    df.reserve(first[parts]);
    for (unsigned p = 0; p < parts; ++p) {
      for (auto& t : part_terms[p]) ix_terms.push_back(std::move(t));
      df.insert(df.end(), part_df[p].begin(), part_df[p].end());
    }
  }
  sorted.clear();
  tables.clear();

  // 3. Postings laid out by term, each list in document order: pairs get their global ids (chunks
  // in parallel), then each thread places the postings of its own range of terms (ranges of about
  // equal posting counts), scanning the chunks in document order.
  std::uint64_t total = 0;
  ix.term_off_.resize(df.size() + 1);
  ix.term_off_[0] = 0;
  for (std::size_t g = 0; g < df.size(); ++g) {
    total += df[g];
    if (total >= 0xFFFFFFF0u) fail("too many postings for one index ({})", total);
    ix.term_off_[g + 1] = static_cast<std::uint32_t>(total);
  }
  detail::PostingVector all_docs(total), all_tfs(total);
  {
    std::atomic<std::size_t> next{0};
    parallel(threads, [&](unsigned) {
      for (std::size_t c; (c = next.fetch_add(1)) < nchunks;) {
        const Chunk& ch = chunks[c];
        const auto& map = l2g[ch.worker];
        GrowingArray<Pair>& prs = pairs[ch.worker];
        const std::size_t end = ch.begin + (ch.doc_end.empty() ? 0 : ch.doc_end.back());
        for (std::size_t p = ch.begin; p < end; ++p) prs[p].id = map[prs[p].id];
      }
    });
  }
  l2g.clear();
  std::vector<std::uint32_t> bounds(threads + 1, static_cast<std::uint32_t>(df.size()));
  bounds[0] = 0;
  for (unsigned t = 1, g = 0; t < threads; ++t) {
    const std::uint64_t want = total * t / threads;
    while (g < df.size() && ix.term_off_[g] < want) ++g;
    bounds[t] = g;
  }
  parallel(threads, [&](unsigned t) {
    const std::uint32_t lo = bounds[t], hi = bounds[t + 1];
    std::vector<std::uint32_t> at(ix.term_off_.begin() + lo, ix.term_off_.begin() + hi);
    std::uint32_t* docids = all_docs.data();
    std::uint32_t* tfs = all_tfs.data();
    for (std::size_t c = 0; c < nchunks; ++c) {
      const Chunk& ch = chunks[c];
      const Pair* prs = pairs[ch.worker].data() + ch.begin;
      std::size_t p = 0;
      const auto d0 = static_cast<std::uint32_t>(c * kChunkDocs);
      for (std::size_t k = 0; k < ch.doc_end.size(); ++k) {
        for (const std::uint32_t end = ch.doc_end[k]; p < end; ++p) {
          const std::uint32_t g = prs[p].id;
          if (g < lo || g >= hi) continue;
          const std::uint32_t pos = at[g - lo]++;
          docids[pos] = d0 + static_cast<std::uint32_t>(k);
          tfs[pos] = prs[p].tf;
        }
      }
    }
  });
  chunks.clear();
  pairs.clear();
  // 4. The blocks: each thread encodes its range of terms into bytes of its own, then the ranges
  // are joined in term order.
  ix.derive_blocks();
  const std::uint32_t nblocks = ix.term_block_.back();
  ix.block_last_.resize(nblocks);
  std::vector<std::string> coded(threads);
  std::vector<std::vector<std::uint64_t>> coded_off(threads);
  parallel(threads, [&](unsigned t) {
    std::string& out = coded[t];
    auto& off = coded_off[t];
    for (std::uint32_t g = bounds[t]; g < bounds[t + 1]; ++g) {
      const std::uint32_t b0 = ix.term_off_[g], e = ix.term_off_[g + 1];
      for (std::uint32_t i = b0, blk = ix.term_block_[g]; i < e; i += Index::kBlock, ++blk) {
        const std::uint32_t m = std::min(Index::kBlock, e - i);
        off.push_back(out.size());
        encode_block(out, all_docs.data() + i, all_tfs.data() + i, m, i == b0 ? 0 : all_docs[i - 1] + 1);
        ix.block_last_[blk] = all_docs[i + m - 1];
      }
    }
  });
  detail::PostingVector().swap(all_docs);
  detail::PostingVector().swap(all_tfs);
  // 5. One store for the strings and the blocks, in file order.
  std::vector<std::uint32_t> order = id_order.get();
  CompressedTexts texts = compress_texts(docs_, threads);
  std::uint64_t bytes = 8 + texts.dict.size();
  for (const Document& doc : docs_) bytes += doc.id.size();
  for (const auto& b : texts.blocks) bytes += b.size();
  for (const auto& t : ix_terms) bytes += t.size();
  for (const auto& c : coded) bytes += c.size();
  ix.store_.reserve(bytes);
  auto table = [&](Index::Strings& s, auto&& field, std::size_t count) {
    s.base = ix.store_.size();
    s.off.resize(count + 1);
    s.off[0] = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const std::string_view v = field(i);
      ix.store_.insert(ix.store_.end(), v.begin(), v.end());
      s.off[i + 1] = ix.store_.size() - s.base;
    }
  };
  table(
      ix.doc_ids_, [&](std::size_t i) -> std::string_view { return docs_[i].id; }, n);
  docs_.clear();
  ix.dict_base_ = ix.store_.size();
  ix.dict_size_ = texts.dict.size();
  ix.store_.insert(ix.store_.end(), texts.dict.begin(), texts.dict.end());
  ix.ddict_ = make_ddict(texts.dict);
  ix.text_base_ = ix.store_.size();
  ix.text_off_.reserve(texts.blocks.size() + 1);
  for (const auto& b : texts.blocks) {
    ix.text_off_.push_back(ix.store_.size() - ix.text_base_);
    ix.store_.insert(ix.store_.end(), b.begin(), b.end());
  }
  ix.text_off_.push_back(ix.store_.size() - ix.text_base_);
  ix.text_first_ = std::move(texts.first);
  ix.text_raw_ = std::move(texts.raw);
  table(
      ix.terms_, [&](std::size_t i) -> std::string_view { return ix_terms[i]; }, ix_terms.size());
  ix_terms.clear();
  ix.blocks_base_ = ix.store_.size();
  ix.block_off_.reserve(nblocks + 1);
  for (unsigned t = 0; t < threads; ++t) {
    const std::uint64_t at = ix.store_.size() - ix.blocks_base_;
    for (const auto o : coded_off[t]) ix.block_off_.push_back(at + o);
    ix.store_.insert(ix.store_.end(), coded[t].begin(), coded[t].end());
    std::string().swap(coded[t]);
  }
  ix.block_off_.push_back(ix.store_.size() - ix.blocks_base_);
  ix.store_.insert(ix.store_.end(), 8, '\0');  // the decoder's slack
  ix.finish(std::move(order));
  return ix;
}

// ---------------------------------------------------------------------------------------------
// Queries and search

Query make_query_from_terms(const std::vector<std::string>& terms) {
  Query q;
  for (const auto& t : terms) {
    auto it = std::find(q.terms.begin(), q.terms.end(), t);
    if (it == q.terms.end()) {
      q.terms.push_back(t);
      q.counts.push_back(1);
    } else {
      ++q.counts[static_cast<std::size_t>(it - q.terms.begin())];
    }
  }
  return q;
}

Query make_query(std::string_view text, const TokenizerOptions& tok) {
  return make_query_from_terms(analyze(text, tok).terms);
}

Searcher::Searcher(const Index& index, Bm25Params params) : ix_(index), p_(params) {
  if (!(p_.k1 >= 0) || !(p_.b >= 0 && p_.b <= 1) || !std::isfinite(p_.k1))
    fail(ErrorCode::kUsage, "BM25 needs k1 >= 0 and 0 <= b <= 1 (got k1 = {}, b = {})", p_.k1, p_.b);
  const std::uint32_t n = ix_.num_docs();
  norm_.resize(n);
  for (std::uint32_t d = 0; d < n; ++d)
    norm_[d] = p_.k1 * (1.0 - p_.b + p_.b * static_cast<double>(ix_.doc_length(d)) / ix_.avgdl());
  max_ratio_.resize(ix_.num_terms());
  block_ratio_.resize(ix_.num_blocks());
  std::array<std::uint32_t, Index::kBlock> docs, tfs;
  for (std::uint32_t t = 0; t < ix_.num_terms(); ++t) {
    double m = 0;
    for (std::uint32_t b = ix_.first_block(t); b < ix_.end_block(t); ++b) {
      const std::uint32_t cnt = ix_.decode_block(t, b, docs.data(), tfs.data());
      double bm = 0;
      for (std::uint32_t i = 0; i < cnt; ++i) {
        const double f = tfs[i];
        bm = std::max(bm, f / (f + norm_[docs[i]]));
      }
      block_ratio_[b] = bm;
      m = std::max(m, bm);
    }
    max_ratio_[t] = m;
  }
}

double Searcher::idf(std::uint32_t term) const {
  const double n = ix_.num_docs();  // N in the Lucene formula
  const double df = ix_.df(term);
  return std::log(1.0 + (n - df + 0.5) / (df + 0.5));
}

namespace {

struct TermW {
  std::uint32_t term;
  double weight;  // count * idf * (k1 + 1)
  double max_score;
  std::size_t slot;  // position in the query (summation order)
};

std::vector<TermW> resolve(const Index& ix, const Searcher& s, const Query& q,
                           const std::vector<double>& max_ratio, double k1) {
  std::vector<TermW> out;
  for (std::size_t i = 0; i < q.terms.size(); ++i) {
    auto t = ix.term(q.terms[i]);
    if (!t) continue;
    const double w = static_cast<double>(q.counts[i]) * s.idf(*t) * (k1 + 1.0);
    out.push_back({*t, w, w * max_ratio[*t], out.size()});
  }
  return out;
}

std::vector<Hit> finish_heap(std::vector<Hit> heap) {
  std::sort(heap.begin(), heap.end(), better);
  return heap;
}

}  // namespace

double Searcher::score(const Query& q, std::uint32_t doc) const {
  double s = 0;
  std::array<std::uint32_t, Index::kBlock> docs, tfs;
  for (const TermW& t : resolve(ix_, *this, q, max_ratio_, p_.k1)) {
    std::uint32_t b = ix_.first_block(t.term);
    while (b < ix_.end_block(t.term) && ix_.block_last(b) < doc) ++b;
    if (b == ix_.end_block(t.term)) continue;
    const std::uint32_t cnt = ix_.decode_block(t.term, b, docs.data(), tfs.data());
    const auto* it = std::lower_bound(docs.data(), docs.data() + cnt, doc);
    if (it != docs.data() + cnt && *it == doc) {
      const double f = tfs[static_cast<std::size_t>(it - docs.data())];
      s += t.weight * f / (f + norm_[doc]);
    }
  }
  return s;
}

std::vector<Hit> Searcher::search_exhaustive(const Query& q, std::size_t k) const {
  if (k == 0) return {};
  std::vector<double> acc(ix_.num_docs(), 0.0);
  std::vector<std::uint32_t> touched;
  std::array<std::uint32_t, Index::kBlock> docs, tfs;
  for (const TermW& t : resolve(ix_, *this, q, max_ratio_, p_.k1)) {
    for (std::uint32_t b = ix_.first_block(t.term); b < ix_.end_block(t.term); ++b) {
      const std::uint32_t cnt = ix_.decode_block(t.term, b, docs.data(), tfs.data());
      for (std::uint32_t i = 0; i < cnt; ++i) {
        const std::uint32_t d = docs[i];
        const double f = tfs[i];
        if (acc[d] == 0.0) touched.push_back(d);
        acc[d] += t.weight * f / (f + norm_[d]);
      }
    }
  }
  std::vector<Hit> hits;
  hits.reserve(touched.size());
  for (auto d : touched) hits.push_back({d, acc[d]});
  const std::size_t m = std::min(k, hits.size());
  std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(m), hits.end(), better);
  hits.resize(m);
  return hits;
}

std::vector<Hit> Searcher::search(const Query& q, std::size_t k) const {
  if (k == 0) return {};
  std::vector<TermW> terms = resolve(ix_, *this, q, max_ratio_, p_.k1);
  const std::size_t nt = terms.size();
  if (nt == 0) return {};
  // Cursors ordered by max score ascending: a prefix of them is "non-essential" once the sum of
  // their max scores cannot lift a document into the top k.
  std::vector<std::size_t> order(nt);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return terms[a].max_score < terms[b].max_score; });
  constexpr std::uint32_t kEnd = std::numeric_limits<std::uint32_t>::max();
  // A cursor over one term's blocks: the current block decoded, whole blocks skipped by their last
  // document number without decoding them.
  struct Cursor {
    const Index* ix;
    std::uint32_t term, block, end_block;
    std::uint32_t pos = 0, size = 0;
    std::uint32_t cur = kEnd;  // the current document (kEnd when done)
    double weight;
    std::size_t slot;
    std::array<std::uint32_t, Index::kBlock> docs, tfs;
    void load(std::uint32_t b) {
      block = b;
      size = ix->decode_block(term, b, docs.data(), tfs.data());
      pos = 0;
      cur = docs[0];
    }
    void start() { load(block); }
    [[nodiscard]] std::uint32_t doc() const { return cur; }
    [[nodiscard]] std::uint32_t tf() const { return tfs[pos]; }
    void next() {
      if (++pos < size) {
        cur = docs[pos];
      } else if (block + 1 < end_block) {
        load(block + 1);
      } else {
        cur = kEnd;
      }
    }
    void next_geq(std::uint32_t d) {
      if (cur >= d) return;
      if (ix->block_last(block) < d) {
        std::uint32_t b = block + 1;
        while (b < end_block && ix->block_last(b) < d) ++b;
        if (b == end_block) {
          cur = kEnd;
          return;
        }
        load(b);
      }
      pos = static_cast<std::uint32_t>(std::lower_bound(docs.data() + pos, docs.data() + size, d) -
                                       docs.data());
      cur = docs[pos];
    }
  };
  std::vector<Cursor> cur;
  cur.reserve(nt);
  std::vector<double> ub(nt);  // ub[i] = sum of max scores of cursors 0..i, slightly inflated
  constexpr double kSlack = 1.0 + 1e-9;
  double run = 0;
  for (std::size_t i = 0; i < nt; ++i) {
    const TermW& t = terms[order[i]];
    Cursor& c = cur.emplace_back();
    c.ix = &ix_;
    c.term = t.term;
    c.block = ix_.first_block(t.term);
    c.end_block = ix_.end_block(t.term);
    c.weight = t.weight;
    c.slot = t.slot;
    c.start();
    run += t.max_score;
    ub[i] = run * kSlack;
  }
  std::vector<double> contrib(nt);
  std::vector<Hit> heap;  // min-heap by `better` (worst on top)
  heap.reserve(k + 1);
  double theta = -1.0;  // a document must score > theta to enter (scores are > 0)
  std::size_t first_ess = 0;
  std::uint32_t next = kEnd;
  for (const auto& c : cur) next = std::min(next, c.doc());
  while (next != kEnd) {
    const std::uint32_t d = next;
    next = kEnd;
    std::fill(contrib.begin(), contrib.end(), 0.0);
    double partial = 0;
    const double nd = norm_[d];
    for (std::size_t i = first_ess; i < nt; ++i) {
      Cursor& c = cur[i];
      if (c.doc() == d) {
        const double f = c.tf();
        const double v = c.weight * f / (f + nd);
        contrib[c.slot] = v;
        partial += v;
        c.next();
      }
      next = std::min(next, c.doc());
    }
    bool alive = true;
    for (std::size_t i = first_ess; i-- > 0;) {
      if (partial * kSlack + ub[i] <= theta) {
        alive = false;
        break;
      }
      Cursor& c = cur[i];
      c.next_geq(d);
      if (c.doc() == d) {
        const double f = c.tf();
        const double v = c.weight * f / (f + nd);
        contrib[c.slot] = v;
        partial += v;
      }
    }
    if (!alive) continue;
    double s = 0;
    for (std::size_t j = 0; j < nt; ++j)
      if (contrib[j] != 0.0) s += contrib[j];
    if (heap.size() < k) {
      heap.push_back({d, s});
      std::push_heap(heap.begin(), heap.end(), better);
    } else if (s > theta) {
      std::pop_heap(heap.begin(), heap.end(), better);
      heap.back() = {d, s};
      std::push_heap(heap.begin(), heap.end(), better);
    } else {
      continue;
    }
    if (heap.size() == k) {
      theta = heap.front().score;
      while (first_ess < nt && ub[first_ess] <= theta) ++first_ess;
      if (first_ess == nt) break;
      // `next` may point at a document only non-essential lists had; recompute from essentials.
      next = kEnd;
      for (std::size_t i = first_ess; i < nt; ++i) next = std::min(next, cur[i].doc());
    }
  }
  return finish_heap(std::move(heap));
}

}  // namespace numcheck::retrieval
