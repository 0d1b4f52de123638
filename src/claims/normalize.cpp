#include "claims/normalize.hpp"

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "claims/icu.hpp"
#include "core/error.hpp"

namespace numcheck::claims {

namespace {

bool is_quote(UChar32 c) {
  switch (c) {
    case '"':
    case '\'':
    case '`':
    case 0x00AB:  // «
    case 0x00B4:  // acute accent used as an apostrophe
    case 0x00BB:  // »
    case 0x2018:  // ‘
    case 0x2019:  // ’
    case 0x201A:  // ‚
    case 0x201B:  // ‛
    case 0x201C:  // “
    case 0x201D:  // ”
    case 0x201E:  // „
    case 0x201F:  // ‟
    case 0x2032:  // ′
    case 0x2033:  // ″
    case 0x2035:  // ‵
    case 0x2036:  // ‶
    case 0x2039:  // ‹
    case 0x203A:  // ›
    case 0x301D:  // 〝
    case 0x301E:  // 〞
    case 0x301F:  // 〟
      return true;
    default:
      return false;
  }
}

bool is_dash(UChar32 c) {
  return (c >= 0x2010 && c <= 0x2015) || c == 0x2043 || c == 0x2212 || c == 0xFE58 || c == 0xFE63 ||
         c == 0xFF0D;
}

}  // namespace

std::string normalize_claim(std::string_view text) {
  thread_local std::u16string u, n;
  icu_into(u, text.size(), "read UTF-8", [&](UChar* d, int32_t cap, int32_t* len, UErrorCode* st) {
    u_strFromUTF8WithSub(d, cap, len, text.data(), static_cast<int32_t>(text.size()), 0xFFFD, nullptr, st);
  });
  UErrorCode st = U_ZERO_ERROR;
  const UNormalizer2* nfkc_cf = unorm2_getNFKCCasefoldInstance(&st);
  if (U_FAILURE(st)) fail("claim normalization: ICU has no NFKC_Casefold data: {}", u_errorName(st));
  icu_into(n, u.size() + 16, "normalize a claim (NFKC_Casefold)",
           [&](UChar* d, int32_t cap, int32_t* len, UErrorCode* e) {
             *len = unorm2_normalize(nfkc_cf, u.data(), static_cast<int32_t>(u.size()), d, cap, e);
           });
  // Quotes, dashes and white space, code point by code point, straight into UTF-8.
  std::string out;
  out.reserve(text.size());
  bool space = false;
  for (std::size_t i = 0; i < n.size();) {
    UChar32 c = 0;
    U16_NEXT(n.data(), i, n.size(), c);
    if (u_isUWhiteSpace(c)) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    if (is_quote(c)) c = '"';
    if (is_dash(c)) c = '-';
    char buf[4];
    int32_t k = 0;
    UBool bad = false;
    U8_APPEND(reinterpret_cast<uint8_t*>(buf), k, 4, c, bad);
    if (!bad) out.append(buf, static_cast<std::size_t>(k));
  }
  std::size_t b = 0, e = out.size();
  while (b < e && (out[b] == '"' || out[b] == ' ')) ++b;
  while (e > b && (out[e - 1] == '"' || out[e - 1] == ' ')) --e;
  return out.substr(b, e - b);
}

std::vector<std::string> claim_words(std::string_view text) {
  const std::string s = normalize_claim(text);
  std::vector<std::string> words;
  std::string w;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t start = i;
    UChar32 c = 0;
    U8_NEXT(reinterpret_cast<const uint8_t*>(s.data()), i, s.size(), c);
    if (c >= 0 && u_isalnum(c)) {
      w.append(s, start, i - start);
    } else if (!w.empty()) {
      words.push_back(std::move(w));
      w.clear();
    }
  }
  if (!w.empty()) words.push_back(std::move(w));
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  return words;
}

bool is_near_duplicate(std::string_view a, std::string_view b) {
  if (normalize_claim(a) == normalize_claim(b)) return true;
  const auto wa = claim_words(a), wb = claim_words(b);
  if (wa.empty() || wb.empty()) return false;
  std::vector<std::string> common;
  std::set_intersection(wa.begin(), wa.end(), wb.begin(), wb.end(), std::back_inserter(common));
  const std::size_t uni = wa.size() + wb.size() - common.size();
  return common.size() * kNearDuplicateJaccardDen >= uni * kNearDuplicateJaccardNum;
}

namespace {

// Words as ids ordered rarest first (ties by first appearance), each text a sorted id list.
struct WordSets {
  std::vector<std::vector<std::uint32_t>> sets;
  std::vector<std::string> keys;  // normalize_claim of each text
};

WordSets word_sets(const std::vector<const std::vector<std::string>*>& lists) {
  std::unordered_map<std::string, std::uint32_t> id;
  std::vector<std::size_t> df;
  WordSets ws;
  for (const auto* l : lists) {
    for (const auto& t : *l) {
      ws.keys.push_back(normalize_claim(t));
      std::vector<std::uint32_t> s;
      for (auto& w : claim_words(t)) {
        const auto [it, fresh] = id.emplace(std::move(w), static_cast<std::uint32_t>(df.size()));
        if (fresh) df.push_back(0);
        ++df[it->second];
        s.push_back(it->second);
      }
      ws.sets.push_back(std::move(s));
    }
  }
  // Rank: rarest first, ties by id (first appearance).
  std::vector<std::uint32_t> order(df.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return df[a] < df[b]; });
  std::vector<std::uint32_t> rank(df.size());
  for (std::uint32_t r = 0; r < order.size(); ++r) rank[order[r]] = r;
  for (auto& s : ws.sets) {
    for (auto& x : s) x = rank[x];
    std::sort(s.begin(), s.end());
  }
  return ws;
}

// Words of a set that a set it shares at least ceil(t |set|) words with must share at least one of.
std::size_t prefix_length(std::size_t n) {
  const std::size_t need =
      (n * kNearDuplicateJaccardNum + kNearDuplicateJaccardDen - 1) / kNearDuplicateJaccardDen;
  return n - need + 1;
}

std::size_t intersection_size(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b) {
  std::size_t i = 0, j = 0, k = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++k;
      ++i;
      ++j;
    }
  }
  return k;
}

std::vector<NearDuplicate> pairs(const WordSets& ws, std::size_t n_left, bool within) {
  const std::size_t n = ws.sets.size();
  const std::size_t right0 = within ? 0 : n_left;
  // Prefix index of the right-hand sets, and equal keys.
  std::unordered_map<std::uint32_t, std::vector<std::size_t>> index;
  std::unordered_map<std::string_view, std::vector<std::size_t>> by_key;
  for (std::size_t r = right0; r < n; ++r) {
    const auto& s = ws.sets[r];
    for (std::size_t k = 0; k < prefix_length(s.size()) && k < s.size(); ++k) index[s[k]].push_back(r);
    by_key[ws.keys[r]].push_back(r);
  }
  std::vector<NearDuplicate> out;
  std::vector<std::size_t> stamp(n, n);
  for (std::size_t l = 0; l < n_left; ++l) {
    const auto& a = ws.sets[l];
    std::vector<std::size_t> cand;
    if (auto it = by_key.find(ws.keys[l]); it != by_key.end())
      for (std::size_t r : it->second)
        if (stamp[r] != l) {
          stamp[r] = l;
          cand.push_back(r);
        }
    for (std::size_t k = 0; k < prefix_length(a.size()) && k < a.size(); ++k) {
      auto it = index.find(a[k]);
      if (it == index.end()) continue;
      for (std::size_t r : it->second)
        if (stamp[r] != l) {
          stamp[r] = l;
          cand.push_back(r);
        }
    }
    std::sort(cand.begin(), cand.end());
    for (std::size_t r : cand) {
      if (within && r <= l) continue;
      const auto& b = ws.sets[r];
      NearDuplicate d;
      d.left = l;
      d.right = r - right0;
      d.same_text = ws.keys[l] == ws.keys[r];
      d.common = intersection_size(a, b);
      d.words = a.size() + b.size() - d.common;
      const bool close = !a.empty() && !b.empty() &&
                         d.common * kNearDuplicateJaccardDen >= d.words * kNearDuplicateJaccardNum;
      if (d.same_text || close) out.push_back(d);
    }
  }
  return out;
}

}  // namespace

std::vector<NearDuplicate> near_duplicates(const std::vector<std::string>& left,
                                           const std::vector<std::string>& right) {
  return pairs(word_sets({&left, &right}), left.size(), false);
}

std::vector<NearDuplicate> near_duplicates_within(const std::vector<std::string>& texts) {
  return pairs(word_sets({&texts}), texts.size(), true);
}

std::vector<std::size_t> near_duplicate_groups(const std::vector<std::string>& texts) {
  std::vector<std::size_t> parent(texts.size());
  for (std::size_t i = 0; i < parent.size(); ++i) parent[i] = i;
  auto find = [&](std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const auto& d : near_duplicates_within(texts)) {
    const std::size_t a = find(d.left), b = find(d.right);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);  // the root is the component's first text
  }
  std::vector<std::size_t> id(texts.size(), texts.size()), out(texts.size());
  std::size_t next = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const std::size_t r = find(i);
    if (id[r] == texts.size()) id[r] = next++;
    out[i] = id[r];
  }
  return out;
}

std::vector<std::size_t> near_duplicates_of(const std::vector<std::string>& texts,
                                            const std::vector<std::string>& others) {
  std::vector<std::size_t> out;
  for (const auto& d : near_duplicates(texts, others))
    if (out.empty() || out.back() != d.left) out.push_back(d.left);
  return out;
}

}  // namespace numcheck::claims
