#pragma once
// An RFC 4180 CSV reader with a configurable separator (QuanTemp's files use ',' and '@').
// Fields may be quoted with '"'; a quoted field may hold separators, line breaks and doubled
// quotes ("" stands for one "). Records end at "\n" or "\r\n". Every record carries the line it
// starts on, so errors name file and line. Malformed input never stops the reader silently: text
// after a closing quote, or a quote left open at the
// end of the file is reported as an issue naming the line and record, and the reader resumes at
// the next record boundary. Like Python's csv module (which wrote the QuanTemp files), a quote
// inside a field that does not start with a quote is kept as a literal character: QuanTemp's
// category file has one such record ('Elizabeth Warren "took a bogus DNA test ...').
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace numcheck::claims {

struct CsvRecord {
  std::size_t line = 0;    // 1-based line the record starts on
  std::size_t number = 0;  // 1-based record number, the header being record 0
  std::vector<std::string> fields;
};

struct CsvIssue {
  std::size_t line = 0;
  std::size_t record = 0;
  std::string message;
};

struct CsvTable {
  std::vector<std::string> header;  // the first record
  std::size_t header_line = 0;
  std::vector<CsvRecord> records;  // records after the header that parsed cleanly
  std::vector<CsvIssue> issues;    // malformed records (not in `records`)
};

// Parses `text` (a leading UTF-8 byte-order mark is skipped). A record whose field count differs
// from the header's is reported as an issue and left out of `records`. A blank last line is not a
// record; blank lines elsewhere are reported.
[[nodiscard]] CsvTable parse_csv(std::string_view text, char separator);

// Splits one record at a time; low-level form used by parse_csv (exposed for tests and fuzzing).
class CsvReader {
 public:
  CsvReader(std::string_view text, char separator);
  // Reads the next record into `out`; returns false at the end of input. When the record is
  // malformed, `error` is set (non-empty) and `out` holds what was read.
  bool next(CsvRecord& out, std::string& error);

 private:
  std::string_view text_;
  char sep_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;
  std::size_t record_ = 0;
};

}  // namespace numcheck::claims
