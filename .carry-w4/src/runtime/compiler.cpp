#include "runtime/compiler.h"

#include <nvrtc.h>

#include <chrono>
#include <memory>

#include "runtime/device_headers.h"
#include "runtime/kernel_cache.h"
#include "support/diagnostics.h"
#include "support/hash.h"

namespace tessel::runtime {
namespace {

// Bumped whenever the way tessel calls NVRTC changes in a way the key does not see.
constexpr const char* kCompilerRevision = "tessel-nvrtc-2";

void check_nvrtc(nvrtcResult result, const char* what) {
  if (result != NVRTC_SUCCESS) {
    user_error(SourceLocation::unknown(), what, " failed: ", nvrtcGetErrorString(result));
  }
}

std::vector<std::string> nvrtc_options(const CompileOptions& options) {
  std::vector<std::string> all = {"--gpu-architecture=" + options.arch, "-std=c++17",
                                  "--device-int128", "-default-device"};
  all.insert(all.end(), options.flags.begin(), options.flags.end());
  return all;
}

struct ProgramDeleter {
  void operator()(nvrtcProgram* program) const {
    nvrtcDestroyProgram(program);
    delete program;
  }
};

}  // namespace

std::string nvrtc_version() {
  int major = 0, minor = 0;
  check_nvrtc(nvrtcVersion(&major, &minor), "nvrtcVersion");
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string compile_environment_key(const CompileOptions& options) {
  Sha256 hasher;
  auto field = [&](std::string_view text) {
    // Length-prefixed, so that no two different field lists hash the same bytes.
    hasher.update(std::to_string(text.size()) + ":");
    hasher.update(text);
  };
  field(kCompilerRevision);
  field(nvrtc_version());
  field(options.arch);
  for (const std::string& option : nvrtc_options(options)) field(option);
  // The headers' digest is computed at build time (hashing their ~220 KB here cost every cache
  // hit 1-2 ms).
  field(device_headers_digest());
  return hasher.hex();
}

std::string compile_cache_key(const std::string& source, const CompileOptions& options) {
  Sha256 hasher;
  auto field = [&](std::string_view text) {
    hasher.update(std::to_string(text.size()) + ":");
    hasher.update(text);
  };
  field(compile_environment_key(options));
  field(options.name);
  field(source);
  return hasher.hex();
}

CompileResult compile_cuda(const std::string& source, const CompileOptions& options) {
  auto start = std::chrono::steady_clock::now();
  auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  };
  if (options.arch.rfind("sm_", 0) != 0) {
    user_error(SourceLocation::unknown(), "compile_cuda: arch '", options.arch,
               "' is not a real architecture (expected sm_XX, e.g. sm_90a)");
  }
  CompileResult result;
  result.cache_key = compile_cache_key(source, options);
  KernelCache cache(options.cache_directory);
  if (options.use_cache) {
    if (std::optional<std::string> cubin = cache.load(result.cache_key)) {
      result.cubin = std::move(*cubin);
      result.cache_hit = true;
      result.milliseconds = elapsed_ms();
      return result;
    }
  }

  std::span<const EmbeddedHeader> headers = device_headers();
  std::vector<std::string> header_contents, header_names;
  for (const EmbeddedHeader& header : headers) {
    header_contents.emplace_back(header.content);
    header_names.emplace_back(header.name);
  }
  std::vector<const char*> content_pointers, name_pointers;
  for (std::size_t i = 0; i < headers.size(); ++i) {
    content_pointers.push_back(header_contents[i].c_str());
    name_pointers.push_back(header_names[i].c_str());
  }
  std::unique_ptr<nvrtcProgram, ProgramDeleter> program(new nvrtcProgram());
  check_nvrtc(nvrtcCreateProgram(program.get(), source.c_str(), options.name.c_str(),
                                 static_cast<int>(headers.size()), content_pointers.data(),
                                 name_pointers.data()),
              "nvrtcCreateProgram");
  std::vector<std::string> option_strings = nvrtc_options(options);
  std::vector<const char*> option_pointers;
  for (const std::string& option : option_strings) option_pointers.push_back(option.c_str());
  nvrtcResult compiled = nvrtcCompileProgram(*program, static_cast<int>(option_pointers.size()),
                                             option_pointers.data());
  std::size_t log_size = 0;
  check_nvrtc(nvrtcGetProgramLogSize(*program, &log_size), "nvrtcGetProgramLogSize");
  result.log.resize(log_size);
  check_nvrtc(nvrtcGetProgramLog(*program, result.log.data()), "nvrtcGetProgramLog");
  while (!result.log.empty() && (result.log.back() == '\0' || result.log.back() == '\n')) {
    result.log.pop_back();
  }
  if (compiled != NVRTC_SUCCESS) {
    user_error(SourceLocation::at(options.name, 0, 0), "CUDA compilation failed (",
               nvrtcGetErrorString(compiled), "):\n", result.log);
  }
  std::size_t cubin_size = 0;
  check_nvrtc(nvrtcGetCUBINSize(*program, &cubin_size), "nvrtcGetCUBINSize");
  result.cubin.resize(cubin_size);
  check_nvrtc(nvrtcGetCUBIN(*program, result.cubin.data()), "nvrtcGetCUBIN");
  if (options.use_cache) cache.store(result.cache_key, result.cubin);
  result.milliseconds = elapsed_ms();
  return result;
}

}  // namespace tessel::runtime
