// The disk entry of a whole compiled kernel (src/compile/compiled_entry.*): its format reads back
// exactly or not at all, and tessel::compile takes it in a fresh cache (a new process, as far as
// the in-process memo knows) with the same source, parameters and cubin, and rebuilds it when
// corrupt.
#include "compile/compiled_entry.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "compile/compile.h"
#include "ir/parser.h"
#include "runtime/kernel_cache.h"
#include "tessel/example_kernels.h"

namespace tessel {
namespace {

namespace fs = std::filesystem;
using target::cuda::KernelParam;

compiled_entry::Entry sample_entry() {
  compiled_entry::Entry e;
  e.lowered_ir = "kernel @k[M](%A: global<f16>[M,64]) {\n}\n";
  e.cubin = std::string(
      "\x7f"
      "ELF\0\x01:with:colons\n",
      20);
  e.cubin_key = "abc123";
  e.emitted.entry = "k";
  e.emitted.source = "extern \"C\" __global__ void k() {}\n";
  e.emitted.threads = 256;
  e.emitted.cluster = 2;
  e.emitted.dynamic_shared_bytes = 197680;
  e.emitted.overlaps_launches = true;
  KernelParam tensor;
  tensor.kind = KernelParam::Kind::tensor;
  tensor.name = "A";
  tensor.type = ir::parse_type("global<f16>[M,64]");
  KernelParam scalar;
  scalar.kind = KernelParam::Kind::scalar;
  scalar.name = "eps";
  scalar.type = ir::Type::scalar(ir::ScalarKind::f32);
  KernelParam size;
  size.kind = KernelParam::Kind::size;
  size.name = "M";
  size.type = ir::Type::scalar(ir::ScalarKind::index);
  KernelParam tma;
  tma.kind = KernelParam::Kind::tma_descriptor;
  tma.name = "tmap_A";
  tma.type = tensor.type;
  tma.tensor = 0;
  tma.box = {64, 128};
  tma.swizzle_bytes = 128;
  e.emitted.params = {tensor, scalar, size, tma};
  return e;
}

void expect_same_params(const std::vector<KernelParam>& a, const std::vector<KernelParam>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].kind, b[i].kind) << i;
    EXPECT_EQ(a[i].name, b[i].name) << i;
    EXPECT_EQ(a[i].type, b[i].type) << i << ": " << a[i].type.str() << " vs " << b[i].type.str();
    EXPECT_EQ(a[i].tensor, b[i].tensor) << i;
    EXPECT_EQ(a[i].box, b[i].box) << i;
    EXPECT_EQ(a[i].swizzle_bytes, b[i].swizzle_bytes) << i;
  }
}

TEST(CompiledEntry, RoundTripsEveryField) {
  compiled_entry::Entry e = sample_entry();
  std::optional<compiled_entry::Entry> back =
      compiled_entry::deserialize(compiled_entry::serialize(e));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->lowered_ir, e.lowered_ir);
  EXPECT_EQ(back->cubin, e.cubin);
  EXPECT_EQ(back->cubin_key, e.cubin_key);
  EXPECT_EQ(back->emitted.entry, e.emitted.entry);
  EXPECT_EQ(back->emitted.source, e.emitted.source);
  EXPECT_EQ(back->emitted.threads, 256);
  EXPECT_EQ(back->emitted.cluster, 2);
  EXPECT_EQ(back->emitted.dynamic_shared_bytes, 197680);
  EXPECT_TRUE(back->emitted.overlaps_launches);
  expect_same_params(back->emitted.params, e.emitted.params);
  // No cubin (compile_cubin = false) is a valid entry too.
  e.cubin.clear();
  back = compiled_entry::deserialize(compiled_entry::serialize(e));
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->cubin.empty());
}

TEST(CompiledEntry, RejectsAnythingButOneWholeEntry) {
  std::string bytes = compiled_entry::serialize(sample_entry());
  // Every truncation, and trailing bytes.
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(compiled_entry::deserialize(bytes.substr(0, n))) << "prefix of " << n << " bytes";
  }
  EXPECT_FALSE(compiled_entry::deserialize(bytes + "1:x"));
  // Another format version.
  std::string other = bytes;
  other.replace(other.find("v5"), 2, "v4");
  EXPECT_FALSE(compiled_entry::deserialize(other));
  // An unknown parameter kind, and a type that does not parse.
  compiled_entry::Entry e = sample_entry();
  e.emitted.params[1].kind = static_cast<KernelParam::Kind>(7);
  EXPECT_FALSE(compiled_entry::deserialize(compiled_entry::serialize(e)));
  std::string bad_type = bytes;
  size_t at = bad_type.rfind("global<f16>[M,64]");  // the TMA parameter's type
  ASSERT_NE(at, std::string::npos);
  bad_type.replace(at, 6, "glob@l");
  EXPECT_FALSE(compiled_entry::deserialize(bad_type));
  // A length field larger than what is left.
  std::string huge = bytes;
  huge.replace(0, huge.find(':'), "999999");
  EXPECT_FALSE(compiled_entry::deserialize(huge));
}

class CompiledEntryCompile : public ::testing::Test {
 protected:
  void SetUp() override {
    root = fs::temp_directory_path() /
           ("tessel-entry-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    module = ir::parse_module(examples::lowered_kernels().at("gemm"), "gemm.tir");
  }
  void TearDown() override { fs::remove_all(root); }
  CompiledKernel compile_in(const std::string& dir) {
    CompileOptions options;
    options.cache_directory = (root / dir).string();
    return compile(*module->kernels.front(), target::cuda::Target::sm90a(), options);
  }
  // A fresh cache directory holding a copy of `from`'s entries: the in-process memo is per
  // directory, so a compile there sees only the disk, as a new process would.
  void copy_cache(const std::string& from, const std::string& to) {
    fs::copy(root / from, root / to, fs::copy_options::recursive);
  }
  fs::path entry_file(const std::string& dir) {
    for (const auto& f : fs::directory_iterator(root / dir)) {
      if (f.path().filename().string().rfind("kernel-", 0) == 0) return f.path();
    }
    ADD_FAILURE() << "no kernel- entry in " << dir;
    return {};
  }
  static void expect_same(const CompiledKernel& a, const CompiledKernel& b) {
    EXPECT_EQ(a.cuda_source(), b.cuda_source());
    EXPECT_EQ(a.emitted().entry, b.emitted().entry);
    EXPECT_EQ(a.emitted().threads, b.emitted().threads);
    EXPECT_EQ(a.emitted().cluster, b.emitted().cluster);
    EXPECT_EQ(a.emitted().dynamic_shared_bytes, b.emitted().dynamic_shared_bytes);
    expect_same_params(a.emitted().params, b.emitted().params);
    EXPECT_EQ(a.lowered_ir(), b.lowered_ir());
    EXPECT_EQ(a.cubin(), b.cubin());
    EXPECT_EQ(a.cache_key(), b.cache_key());
  }
  fs::path root;
  std::unique_ptr<ir::Module> module;
};

TEST_F(CompiledEntryCompile, FreshCacheTakesTheDiskEntry) {
  CompiledKernel cold = compile_in("a");
  EXPECT_FALSE(cold.times().from_disk);
  ASSERT_FALSE(cold.cubin().empty());
  // The GEMM asks for TMA descriptors: their box and swizzle must survive the disk.
  bool has_tma = false;
  for (const KernelParam& p : cold.emitted().params) {
    has_tma = has_tma || p.kind == KernelParam::Kind::tma_descriptor;
  }
  EXPECT_TRUE(has_tma);
  copy_cache("a", "b");
  // Only the whole-kernel entry is needed: without the lowered IR and the NVRTC cubin entries the
  // passes, the emitter or NVRTC would have to run.
  for (const auto& f : fs::directory_iterator(root / "b")) {
    if (f.path().filename().string().rfind("kernel-", 0) != 0) fs::remove(f.path());
  }
  CompiledKernel hit = compile_in("b");
  EXPECT_TRUE(hit.times().from_disk);
  EXPECT_TRUE(hit.times().cache_hit);
  EXPECT_EQ(hit.times().nvrtc_ms, 0.0);
  expect_same(hit, cold);
  // The launch checks work on the kernel read back (the lowered IR was parsed).
  auto sizes = hit.bind({TensorArg{0x10000, {300, 64}, ir::ScalarKind::f16},
                         TensorArg{0x20000, {500, 64}, ir::ScalarKind::f16},
                         TensorArg{0x30000, {300, 500}, ir::ScalarKind::f16}});
  EXPECT_EQ(sizes.at("M"), 300);
  // (A persistent grid, sized here for 132 SMs: no GPU is needed.)
  EXPECT_EQ(hit.launch_config(sizes, 132).grid.count(),
            cold.launch_config(sizes, 132).grid.count());
  // Goal < 5 ms on the device host; loose here (busy CI machines).
  std::cout << "cold " << cold.times().total_ms << " ms, disk hit " << hit.times().total_ms
            << " ms\n";
  EXPECT_LT(hit.times().total_ms, 100.0);
}

TEST_F(CompiledEntryCompile, CorruptEntryIsRebuilt) {
  CompiledKernel cold = compile_in("a");
  copy_cache("a", "flipped");
  fs::path entry = entry_file("flipped");
  ASSERT_FALSE(entry.empty());
  {  // One byte of the payload changed: the checksum no longer holds.
    std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-100, std::ios::end);
    char c = 0;
    f.get(c);
    f.seekp(-100, std::ios::end);
    f.put(static_cast<char>(c ^ 0x20));
  }
  CompiledKernel rebuilt = compile_in("flipped");
  EXPECT_FALSE(rebuilt.times().from_disk);
  expect_same(rebuilt, cold);
  // The rebuild wrote a good entry: a fresh copy of that cache hits it.
  copy_cache("flipped", "after-flip");
  CompiledKernel hit = compile_in("after-flip");
  EXPECT_TRUE(hit.times().from_disk);
  expect_same(hit, cold);

  // An entry whose checksum holds but whose payload is not an entry (e.g. another format).
  copy_cache("a", "garbage");
  fs::path garbage = entry_file("garbage");
  std::string key = garbage.stem().string();
  runtime::KernelCache cache((root / "garbage").string());
  ASSERT_TRUE(cache.store(key, "not an entry"));
  CompiledKernel rebuilt2 = compile_in("garbage");
  EXPECT_FALSE(rebuilt2.times().from_disk);
  expect_same(rebuilt2, cold);
  std::optional<std::string> stored = cache.load(key);
  ASSERT_TRUE(stored);
  EXPECT_TRUE(compiled_entry::deserialize(*stored));
}

TEST_F(CompiledEntryCompile, EntryWithoutCubinGainsOne) {
  // --emit=cuda stores an entry with no cubin; a later compile that wants the cubin runs NVRTC
  // (not the passes or the emitter) and completes the entry.
  CompileOptions options;
  options.cache_directory = (root / "a").string();
  options.compile_cubin = false;
  CompiledKernel source_only =
      compile(*module->kernels.front(), target::cuda::Target::sm90a(), options);
  EXPECT_TRUE(source_only.cubin().empty());
  copy_cache("a", "b");
  CompiledKernel with_cubin = compile_in("b");
  EXPECT_TRUE(with_cubin.times().from_disk);
  EXPECT_FALSE(with_cubin.cubin().empty());
  EXPECT_EQ(with_cubin.cuda_source(), source_only.cuda_source());
  copy_cache("b", "c");
  CompiledKernel hit = compile_in("c");
  EXPECT_TRUE(hit.times().from_disk);
  EXPECT_EQ(hit.times().nvrtc_ms, 0.0);
  EXPECT_EQ(hit.cubin(), with_cubin.cubin());
  // And an entry with a cubin read with compile_cubin = false gives no cubin (as before).
  options.cache_directory = (root / "c").string();
  CompiledKernel no_cubin =
      compile(*module->kernels.front(), target::cuda::Target::sm90a(), options);
  EXPECT_TRUE(no_cubin.times().from_disk);
  EXPECT_TRUE(no_cubin.cubin().empty());
}

}  // namespace
}  // namespace tessel
