#include "num/units.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../support/exact.hpp"
#include "core/error.hpp"

namespace numcheck::num {
namespace {

const UnitRegistry& reg() { return UnitRegistry::builtin(); }
using numcheck::testing::q;

TEST(Units, BuiltinHasTheOrbitStrictParserNames) {
  // Symbols, case-sensitive.
  for (const char* s : {"L", "mL", "km", "m", "cm", "km/h"}) {
    const Unit* u = reg().lookup(s);
    ASSERT_NE(u, nullptr) << s;
    EXPECT_EQ(u->id, s);
  }
  // Words, case-insensitive, singular and plural, American and British.
  const std::pair<const char*, const char*> words[] = {
      {"liters", "L"},
      {"litres", "L"},
      {"liter", "L"},
      {"Litre", "L"},
      {"milliliters", "mL"},
      {"millilitres", "mL"},
      {"milliliter", "mL"},
      {"kilometers", "km"},
      {"kilometres", "km"},
      {"kilometer", "km"},
      {"meters", "m"},
      {"metres", "m"},
      {"METER", "m"},
      {"centimeters", "cm"},
      {"centimetres", "cm"},
      {"centimeter", "cm"},
      {"kilometers per hour", "km/h"},
      {"kilometer per hour", "km/h"},
      {"Kilometres  per\thour", "km/h"},
      {"kilometre per hour", "km/h"},
  };
  for (const auto& [w, id] : words) {
    const Unit* u = reg().lookup(w);
    ASSERT_NE(u, nullptr) << w;
    EXPECT_EQ(u->id, id) << w;
  }
}

TEST(Units, SymbolsAreCaseSensitive) {
  EXPECT_EQ(reg().lookup("ML"), nullptr);
  EXPECT_EQ(reg().lookup("KM"), nullptr);
  EXPECT_EQ(reg().lookup("Km/h"), nullptr);
  EXPECT_EQ(reg().lookup("M"), nullptr);
  EXPECT_EQ(reg().lookup("parsecs"), nullptr);
  EXPECT_EQ(reg().lookup(""), nullptr);
  EXPECT_EQ(reg().lookup("   "), nullptr);
  EXPECT_EQ(reg().lookup(std::string(100000, 'm')), nullptr);
}

TEST(Units, OtherUnitsAndCanonicals) {
  for (const char* id : {"g", "kg", "mg", "s", "min", "h", "m/s", "%", "USD", "EUR", "GBP", "INR", "1"}) {
    EXPECT_NE(reg().by_id(id), nullptr) << id;
  }
  EXPECT_EQ(reg().canonical("volume")->id, "L");
  EXPECT_EQ(reg().canonical("length")->id, "m");
  EXPECT_EQ(reg().canonical("speed")->id, "m/s");
  EXPECT_EQ(reg().canonical("mass")->id, "kg");
  EXPECT_EQ(reg().canonical("time")->id, "s");
  EXPECT_EQ(reg().canonical("dimensionless")->id, "1");
  EXPECT_EQ(reg().canonical("currency:USD")->id, "USD");
  EXPECT_EQ(reg().canonical("nonsense"), nullptr);
  EXPECT_EQ(reg().lookup("$")->id, "USD");
  EXPECT_TRUE(reg().lookup("$")->prefix);
  EXPECT_EQ(reg().lookup("\xE2\x82\xAC")->id, "EUR");  // €
  EXPECT_EQ(reg().lookup("\xC2\xA3")->id, "GBP");      // £
  EXPECT_EQ(reg().lookup("\xE2\x82\xB9")->id, "INR");  // ₹
  EXPECT_EQ(reg().lookup("%")->factor, q("1/100"));
  EXPECT_EQ(reg().lookup("percent")->dimension, "dimensionless");
  for (const auto& u : reg().units()) {
    EXPECT_GT(u.factor, Rational(0)) << u.id;
    EXPECT_NE(reg().canonical(u.dimension), nullptr) << u.id;
  }
}

TEST(Units, ConversionIsExact) {
  const Unit& L = *reg().by_id("L");
  const Unit& mL = *reg().by_id("mL");
  const Unit& km = *reg().by_id("km");
  const Unit& m = *reg().by_id("m");
  const Unit& cm = *reg().by_id("cm");
  const Unit& kmh = *reg().by_id("km/h");
  const Unit& ms = *reg().by_id("m/s");
  EXPECT_EQ(UnitRegistry::convert(q("5/4"), L, mL), Rational(1250));
  EXPECT_EQ(UnitRegistry::convert(Rational(1250), mL, L), q("5/4"));
  EXPECT_EQ(UnitRegistry::convert(Rational(3), km, m), Rational(3000));
  EXPECT_EQ(UnitRegistry::convert(Rational(7), m, cm), Rational(700));
  EXPECT_EQ(UnitRegistry::convert(Rational(1), cm, km), q("1/100000"));
  EXPECT_EQ(UnitRegistry::convert(Rational(36), kmh, ms), Rational(10));
  EXPECT_EQ(UnitRegistry::convert(Rational(1), ms, kmh), q("18/5"));
  EXPECT_EQ(UnitRegistry::convert(Rational(1), *reg().by_id("h"), *reg().by_id("min")), Rational(60));
  EXPECT_EQ(UnitRegistry::convert(Rational(2), *reg().by_id("kg"), *reg().by_id("g")), Rational(2000));
  EXPECT_EQ(UnitRegistry::convert(Rational(1), *reg().by_id("mi"), km), q("201168/125000"));
  EXPECT_FALSE(UnitRegistry::convert(Rational(1), L, m));
  EXPECT_FALSE(UnitRegistry::convert(Rational(1), *reg().by_id("USD"), *reg().by_id("EUR")));
  EXPECT_EQ(UnitRegistry::to_canonical(Rational(250), mL), q("1/4"));
}

// ---- Bad registry files: each error names the field --------------------------------------

std::string error_of(const std::string& json) {
  try {
    (void)UnitRegistry::parse(json, "u.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Units, BadFilesNameTheField) {
  const std::string dims = R"("dimensions": [{"name": "length", "canonical": "m"}])";
  const std::string m =
      R"({"id": "m", "dimension": "length", "factor": "1", "symbols": ["m"], "words": ["meter"]})";
  auto doc = [&](const std::string& units) { return "{" + dims + R"(, "units": [)" + units + "]}"; };
  EXPECT_EQ(error_of(doc(m)), "");
  EXPECT_NE(error_of("{").find("u.json: invalid JSON at line 1"), std::string::npos);
  EXPECT_NE(error_of("[]").find("top level"), std::string::npos);
  EXPECT_NE(error_of(R"({"units": []})").find("'dimensions'"), std::string::npos);
  EXPECT_NE(error_of("{" + dims + "}").find("'units'"), std::string::npos);
  EXPECT_NE(error_of(doc(m + R"(, {"id": "km", "dimension": "length", "factor": "1/0"})"))
                .find("units[1] ('km').factor"),
            std::string::npos);
  EXPECT_NE(error_of(doc(m + R"(, {"id": "km", "dimension": "length", "factor": 1000})"))
                .find("units[1] ('km').factor"),
            std::string::npos);
  EXPECT_NE(
      error_of(doc(m + R"(, {"id": "km", "dimension": "length", "factor": "-5"})")).find("must be positive"),
      std::string::npos);
  EXPECT_NE(error_of(doc(m + R"(, {"id": "km", "dimension": "lenght", "factor": "1000"})"))
                .find(".dimension: 'lenght'"),
            std::string::npos);
  EXPECT_NE(error_of(doc(m + R"(, {"id": "km", "dimension": "length", "factor": "1000", "symbols": ["m"]})"))
                .find("units[1] ('km').symbols: 'm' is already used by unit 'm'"),
            std::string::npos);
  EXPECT_NE(
      error_of(doc(m + R"(, {"id": "km", "dimension": "length", "factor": "1000", "words": ["METER"]})"))
          .find(".words: 'meter' is already used"),
      std::string::npos);
  EXPECT_NE(
      error_of(doc(m + R"(, {"id": "m", "dimension": "length", "factor": "1"})")).find("declared twice"),
      std::string::npos);
  EXPECT_NE(error_of(doc(R"({"dimension": "length", "factor": "1"})")).find("units[0]: missing field 'id'"),
            std::string::npos);
  EXPECT_NE(error_of(doc(R"({"id": "m", "dimension": "length", "factor": "1", "symbols": "m"})"))
                .find("field 'symbols' must be a list of strings"),
            std::string::npos);
  EXPECT_NE(error_of(doc(R"({"id": "m", "dimension": "length", "factor": "1", "symbols": [""]})"))
                .find(".symbols[0]: must not be empty"),
            std::string::npos);
  EXPECT_NE(
      error_of(doc(R"({"id": "m", "dimension": "length", "factor": "1", "prefix": "yes"})")).find(".prefix"),
      std::string::npos);
  EXPECT_NE(error_of(doc(R"({"id": "km", "dimension": "length", "factor": "1000"})"))
                .find("dimensions[0].canonical: unit 'm' is not declared"),
            std::string::npos);
  EXPECT_NE(
      error_of(doc(R"({"id": "m", "dimension": "length", "factor": "2"})")).find("must have factor \"1\""),
      std::string::npos);
  EXPECT_NE(error_of(R"({"format": "other", "dimensions": [], "units": []})").find("'format'"),
            std::string::npos);
}

TEST(Units, LoadsAUserFile) {
  const auto path = std::filesystem::path(NUMCHECK_BINARY_DIR) / "units_test_user.json";
  {
    std::ofstream f(path);
    f << R"({"format": "numcheck-units", "version": 1,
             "dimensions": [{"name": "volume", "canonical": "L"}],
             "units": [{"id": "L", "dimension": "volume", "factor": "1", "symbols": ["L", "l"], "words": ["litre", "litres"]},
                       {"id": "cup", "dimension": "volume", "factor": "1/4", "words": ["cup", "cups"]}]})";
  }
  const UnitRegistry r = UnitRegistry::load(path);
  EXPECT_EQ(r.units().size(), 2u);
  EXPECT_EQ(r.lookup("Cups")->id, "cup");
  EXPECT_EQ(UnitRegistry::convert(Rational(2), *r.lookup("cups"), *r.lookup("l")), q("1/2"));
  EXPECT_THROW((void)UnitRegistry::load(path.string() + ".missing"), Error);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace numcheck::num
