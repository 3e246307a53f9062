// The code in docs/adding-a-transport.md and docs/adding-a-workload.md is
// quoted from the compiled sources in tests/docs/. A block preceded by
//   <!-- snippet: tests/docs/FILE#NAME -->
// must equal the lines between "// [snippet:NAME]" and "// [end-snippet]" in
// FILE, so a change to either side fails here until the other follows.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string read(const std::string& relative) {
  std::ifstream in(std::string(SAFS_SOURCE_DIR) + "/" + relative);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The source lines between the markers, or nullopt-like empty + found=false.
bool source_region(const std::string& source, const std::string& name, std::string& region) {
  const std::string begin = "// [snippet:" + name + "]\n";
  const std::string end = "// [end-snippet]\n";
  const std::size_t at = source.find(begin);
  if (at == std::string::npos) return false;
  // The markers may be indented; take whole lines after the begin marker.
  const std::size_t from = at + begin.size();
  const std::size_t to = source.find(end, from);
  if (to == std::string::npos) return false;
  const std::size_t line_start = source.rfind('\n', to);
  region = source.substr(from, line_start + 1 - from);
  return true;
}

struct Quote {
  std::string file;
  std::string name;
  std::string code;
};

std::vector<Quote> quotes_in(const std::string& markdown) {
  std::vector<Quote> quotes;
  const std::string marker = "<!-- snippet: ";
  std::size_t at = 0;
  while ((at = markdown.find(marker, at)) != std::string::npos) {
    const std::size_t end = markdown.find(" -->", at);
    const std::string ref = markdown.substr(at + marker.size(), end - at - marker.size());
    const std::size_t hash = ref.find('#');
    const std::size_t open = markdown.find("```cpp\n", end);
    const std::size_t body = open + 7;
    const std::size_t close = markdown.find("```\n", body);
    quotes.push_back(
        {ref.substr(0, hash), ref.substr(hash + 1), markdown.substr(body, close - body)});
    at = close;
  }
  return quotes;
}

class DocSnippets : public ::testing::TestWithParam<const char*> {};

TEST_P(DocSnippets, EveryQuotedBlockMatchesItsSource) {
  const std::string markdown = read(GetParam());
  ASSERT_FALSE(markdown.empty()) << GetParam() << " is missing";
  const std::vector<Quote> quotes = quotes_in(markdown);
  EXPECT_FALSE(quotes.empty()) << GetParam() << " quotes no snippet";
  for (const Quote& q : quotes) {
    const std::string source = read(q.file);
    ASSERT_FALSE(source.empty()) << q.file << " is missing";
    std::string region;
    ASSERT_TRUE(source_region(source, q.name, region)) << q.file << " has no snippet " << q.name;
    EXPECT_EQ(q.code, region) << GetParam() << ": the block quoting " << q.file << "#" << q.name
                              << " differs from the source; copy the source region into the doc";
  }
}

INSTANTIATE_TEST_SUITE_P(Docs, DocSnippets,
                         ::testing::Values("docs/adding-a-transport.md",
                                           "docs/adding-a-workload.md"));

}  // namespace
