#include "compile/compiled_entry.h"

#include <charconv>
#include <cstdint>

#include "ir/parser.h"
#include "support/diagnostics.h"

namespace tessel::compiled_entry {
namespace {

using target::cuda::EmittedKernel;
using target::cuda::KernelParam;

#if defined(__x86_64__) && defined(__GLIBCXX__)
// A field added to EmittedKernel or KernelParam must be written and read here too, or a disk hit
// would return a kernel without it. (Sizes as g++/libstdc++ on x86-64 lay these structs out.)
static_assert(sizeof(EmittedKernel) == 2 * sizeof(std::string) + 16 + sizeof(std::vector<int>),
              "EmittedKernel changed: update compiled_entry.cpp (serialize/deserialize) and bump "
              "kFormat");
static_assert(sizeof(KernelParam) ==
                  8 + sizeof(std::string) + sizeof(ir::Type) + 8 + sizeof(std::vector<int64_t>) + 8,
              "KernelParam changed: update compiled_entry.cpp (serialize/deserialize) and bump "
              "kFormat");
#endif

class Writer {
 public:
  void text(std::string_view s) {
    out_ += std::to_string(s.size());
    out_ += ':';
    out_ += s;
  }
  void number(int64_t x) { text(std::to_string(x)); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// Reads what Writer wrote; any mismatch sets failed() and yields empty values from then on.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  std::string_view text() {
    if (failed_) return {};
    size_t colon = in_.find(':');
    size_t size = 0;
    if (colon == std::string_view::npos || colon == 0 || colon > 20) return fail();
    auto [end, error] = std::from_chars(in_.data(), in_.data() + colon, size);
    if (error != std::errc() || end != in_.data() + colon) return fail();
    if (size > in_.size() - colon - 1) return fail();
    std::string_view s = in_.substr(colon + 1, size);
    in_.remove_prefix(colon + 1 + size);
    return s;
  }
  int64_t number() {
    std::string_view s = text();
    int64_t x = 0;
    if (failed_) return 0;
    auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), x);
    if (s.empty() || error != std::errc() || end != s.data() + s.size()) fail();
    return x;
  }
  // A count of items that follow, each at least `min_bytes` long: bounded by what is left.
  int64_t count(size_t min_bytes) {
    int64_t n = number();
    if (n < 0 || static_cast<uint64_t>(n) > in_.size() / min_bytes) fail();
    return failed_ ? 0 : n;
  }
  bool failed() const { return failed_; }
  bool at_end() const { return in_.empty(); }

 private:
  std::string_view fail() {
    failed_ = true;
    return {};
  }
  std::string_view in_;
  bool failed_ = false;
};

}  // namespace

std::string serialize(const Entry& entry) {
  Writer w;
  w.text(kFormat);
  w.text(entry.lowered_ir);
  w.text(entry.cubin);
  w.text(entry.cubin_key);
  const EmittedKernel& k = entry.emitted;
  w.text(k.entry);
  w.text(k.source);
  w.number(k.threads);
  w.number(k.cluster);
  w.number(k.dynamic_shared_bytes);
  w.number(k.overlaps_launches ? 1 : 0);
  w.number(static_cast<int64_t>(k.params.size()));
  for (const KernelParam& p : k.params) {
    w.number(static_cast<int64_t>(p.kind));
    w.text(p.name);
    w.text(p.type.str());
    w.number(p.tensor);
    w.number(static_cast<int64_t>(p.box.size()));
    for (int64_t b : p.box) w.number(b);
    w.number(p.swizzle_bytes);
    w.number(p.optional ? 1 : 0);
  }
  return w.take();
}

std::optional<Entry> deserialize(std::string_view bytes) {
  Reader r(bytes);
  if (r.text() != kFormat) return std::nullopt;
  Entry entry;
  entry.lowered_ir = r.text();
  entry.cubin = r.text();
  entry.cubin_key = r.text();
  EmittedKernel& k = entry.emitted;
  k.entry = r.text();
  k.source = r.text();
  k.threads = static_cast<int>(r.number());
  k.cluster = static_cast<int>(r.number());
  k.dynamic_shared_bytes = static_cast<int>(r.number());
  k.overlaps_launches = r.number() != 0;
  int64_t params = r.count(16);  // a parameter is at least 8 fields of 2 bytes
  for (int64_t i = 0; i < params && !r.failed(); ++i) {
    KernelParam p;
    int64_t kind = r.number();
    if (kind < 0 || kind > static_cast<int64_t>(KernelParam::Kind::workspace))
      return std::nullopt;
    p.kind = static_cast<KernelParam::Kind>(kind);
    p.name = r.text();
    std::string_view type = r.text();
    if (r.failed()) return std::nullopt;
    try {
      p.type = ir::parse_type(type);
    } catch (const UserError&) {
      return std::nullopt;
    }
    p.tensor = static_cast<int>(r.number());
    int64_t box = r.count(2);
    for (int64_t b = 0; b < box; ++b) p.box.push_back(r.number());
    p.swizzle_bytes = static_cast<int>(r.number());
    p.optional = r.number() != 0;
    k.params.push_back(std::move(p));
  }
  if (r.failed() || !r.at_end() || k.entry.empty() || k.source.empty() || k.threads <= 0 ||
      k.cluster <= 0) {
    return std::nullopt;
  }
  return entry;
}

}  // namespace tessel::compiled_entry
