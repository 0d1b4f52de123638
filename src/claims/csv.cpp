#include "claims/csv.hpp"

#include <fmt/format.h>

namespace numcheck::claims {

CsvReader::CsvReader(std::string_view text, char separator) : text_(text), sep_(separator) {
  if (text_.size() >= 3 && text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
}

bool CsvReader::next(CsvRecord& out, std::string& error) {
  out.fields.clear();
  error.clear();
  if (pos_ >= text_.size()) return false;
  out.line = line_;
  out.number = record_++;
  const std::size_t n = text_.size();
  std::string field;
  auto note = [&](std::string msg) {
    if (error.empty()) error = std::move(msg);
  };
  // Skips to the end of the current record (after an error inside an unquoted context).
  for (;;) {
    // Start of a field.
    field.clear();
    if (pos_ < n && text_[pos_] == '"') {
      const std::size_t open_line = line_;
      ++pos_;
      bool closed = false;
      while (pos_ < n) {
        const char c = text_[pos_];
        if (c == '"') {
          if (pos_ + 1 < n && text_[pos_ + 1] == '"') {
            field.push_back('"');
            pos_ += 2;
            continue;
          }
          ++pos_;
          closed = true;
          break;
        }
        if (c == '\n') ++line_;
        field.push_back(c);
        ++pos_;
      }
      if (!closed) {
        note(fmt::format("quoted field opened on line {} is never closed", open_line));
        out.fields.push_back(std::move(field));
        return true;
      }
      // After the closing quote: separator, end of line or end of input.
      if (pos_ < n && text_[pos_] != sep_ && text_[pos_] != '\n' &&
          !(text_[pos_] == '\r' && pos_ + 1 < n && text_[pos_ + 1] == '\n')) {
        note(fmt::format("line {}: unexpected character after a closing quote in field {}", line_,
                         out.fields.size() + 1));
        // Keep the rest of the field as text so nothing is lost from the report.
        while (pos_ < n && text_[pos_] != sep_ && text_[pos_] != '\n') field.push_back(text_[pos_++]);
      }
    } else {
      while (pos_ < n) {
        const char c = text_[pos_];
        if (c == sep_ || c == '\n') break;
        if (c == '\r' && pos_ + 1 < n && text_[pos_ + 1] == '\n') break;
        field.push_back(c);
        ++pos_;
      }
    }
    out.fields.push_back(std::move(field));
    if (pos_ >= n) return true;
    if (text_[pos_] == sep_) {
      ++pos_;
      continue;
    }
    // End of record.
    if (text_[pos_] == '\r') ++pos_;
    ++pos_;  // '\n'
    ++line_;
    return true;
  }
}

CsvTable parse_csv(std::string_view text, char separator) {
  CsvTable t;
  CsvReader r(text, separator);
  CsvRecord rec;
  std::string err;
  bool have_header = false;
  while (r.next(rec, err)) {
    if (!have_header) {
      have_header = true;
      t.header = rec.fields;
      t.header_line = rec.line;
      if (!err.empty()) t.issues.push_back({rec.line, rec.number, "header: " + err});
      continue;
    }
    if (!err.empty()) {
      t.issues.push_back({rec.line, rec.number, err});
      continue;
    }
    if (rec.fields.size() == 1 && rec.fields[0].empty()) {
      t.issues.push_back({rec.line, rec.number, fmt::format("line {}: blank line", rec.line)});
      continue;
    }
    if (rec.fields.size() != t.header.size()) {
      t.issues.push_back({rec.line, rec.number,
                          fmt::format("line {}: {} fields, the header has {}", rec.line, rec.fields.size(),
                                      t.header.size())});
      continue;
    }
    t.records.push_back(rec);
  }
  return t;
}

}  // namespace numcheck::claims
