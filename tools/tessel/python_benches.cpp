// The Python-backed bench suites (python_benches.h): an option table per suite, each option a
// flag or a value matched whole by a regular expression, then python3 on the suite's script.
#include "tessel/python_benches.h"

#include <cstdlib>
#include <iostream>
#include <regex>

#include "support/diagnostics.h"

namespace tessel::tool {
namespace {

struct PythonOption {
  std::string name;
  std::string pattern;  // empty: a flag without a value
  std::string what;     // what the value must be, for the message
};

const std::string kPositive = "[1-9][0-9]*";

// Checks `args` against `options` and runs bench/python/<script> with them.
int run_python_bench(const std::string& suite, const std::string& script,
                     const std::vector<PythonOption>& options,
                     const std::vector<std::string>& args) {
  std::vector<std::string> forwarded;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const PythonOption* option = nullptr;
    for (const PythonOption& o : options) {
      if (o.name == a) option = &o;
    }
    if (!option) {
      user_error(SourceLocation::unknown(), "bench ", suite, ": unknown option '", a,
                 "' (see `tessel help bench`)");
    }
    forwarded.push_back(a);
    if (option->pattern.empty()) continue;
    if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0)
      user_error(SourceLocation::unknown(), "bench ", suite, ": ", a, " needs a value");
    const std::string& value = args[++i];
    if (!std::regex_match(value, std::regex(option->pattern)))
      user_error(SourceLocation::unknown(), "bench ", suite, ": ", a, " takes ", option->what,
                 ", not '", value, "'");
    forwarded.push_back(value);
  }
  return run_python_script(script, forwarded);
}

// A comma-separated list of `item`s.
std::string list_of(const std::string& item) {
  return item + "(," + item + ")*";
}

// Single-quoted for the shell.
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

// python3 puts the script's folder on sys.path, so moe.py finds w4a16.py and bench_common.py.
int run_python_script(const std::string& script, const std::vector<std::string>& args) {
  std::string command = "PYTHONPATH=" + shell_quote(std::string(TESSEL_BINARY_DIR) + "/python") +
                        "${PYTHONPATH:+:$PYTHONPATH} python3 " +
                        shell_quote(std::string(TESSEL_SOURCE_DIR) + "/bench/python/" + script);
  for (const std::string& a : args) command += " " + shell_quote(a);
  std::cout << command << std::endl;
  return std::system(command.c_str()) == 0 ? 0 : 1;
}

int run_w4a16_bench(const std::vector<std::string>& args) {
  return run_python_bench(
      "w4a16", "w4a16.py",
      {{"--shapes", list_of("[1-9][0-9]*x[1-9][0-9]*x[1-9][0-9]*g[1-9][0-9]*"),
        "shapes MxNxKgG separated by commas"},
       {"--variants",
        list_of("[tpscz][1-9][0-9]*x[1-9][0-9]*(_k[1-9][0-9]*)?(_h[1-9][0-9]*)?(_gs)?"
                "(_sk[0-9]*)?(_b[1-9][0-9]*)?(_w[1-9][0-9]*)?(_p[1-9][0-9]*)?(_st[1-9][0-9]*)?"
                "(_ov(off|wait|early|late|prefetch|preload))?(_nt)?(_sg)?(_ul)?(_ns)?"),
        "variant names [tpscz]RxT[_kKT][_hH][_gs][_sk[S]][_bB][_wW][_pP][_stN][_ovMODE][_nt][_sg][_ul][_ns] "
        "separated by commas"},
       {"--json", ".+", "a file"},
       {"--iterations", kPositive, "a positive count"},
       {"--graph", kPositive, "a positive launch count"},
       {"--sets", kPositive, "a positive count"}},
      args);
}

namespace {

// The MoE layer's options, which moe.py and the fused routing's benches all take.
std::vector<PythonOption> moe_layer_options() {
  return {{"--tokens", list_of(kPositive), "token counts separated by commas"},
          {"--experts", kPositive, "a positive count"},
          {"--top-k", kPositive, "a positive count"},
          {"--hidden", kPositive, "a positive size"},
          {"--intermediate", kPositive, "a positive size"},
          {"--group", kPositive, "a positive group size"},
          {"--variants", list_of("t(16|32|64|128)(_r(64|128))?(_b[1-4])?(_s([1-9]|1[0-6]))?"),
           "variant names t<16|32|64|128>[_r<64|128>][_b<1-4>][_s<1-16>] separated by commas"},
          {"--json", ".+", "a file"},
          {"--iterations", kPositive, "a positive count"}};
}

}  // namespace

int run_moe_bench(const std::vector<std::string>& args) {
  // --routing combine|gather: the fused routing's benches (moe_combine.py: the down projection
  // with the weighted combine; moe_gather.py: the up projection reading the tokens), which take
  // the layer's options but not the expert GEMM's own (--weights, --tuned, --tessel-only).
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] != "--routing") continue;
    const std::string value = i + 1 < args.size() ? args[i + 1] : "";
    if (value != "combine" && value != "gather") {
      user_error(SourceLocation::unknown(),
                 "bench moe: --routing takes combine or gather, not '", value, "'");
    }
    std::vector<std::string> rest(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(i));
    rest.insert(rest.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 2, args.end());
    return run_python_bench("moe --routing " + value,
                            value == "combine" ? "moe_combine.py" : "moe_gather.py",
                            moe_layer_options(), rest);
  }
  std::vector<PythonOption> options = moe_layer_options();
  options.push_back({"--weights", "int4|fp8", "int4 or fp8"});
  options.push_back({"--tuned", "", ""});
  options.push_back({"--tessel-only", "", ""});
  return run_python_bench("moe", "moe.py", options, args);
}

}  // namespace tessel::tool
