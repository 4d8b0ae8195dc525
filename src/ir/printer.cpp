// The tile IR printer.
#include "ir/printer.h"

#include <set>
#include <sstream>
#include <unordered_map>

namespace tessel::ir {
namespace {

class Printer {
 public:
  std::string kernel(const Operation& op) {
    TESSEL_ASSERT(op.kind() == OpKind::kernel, "print_kernel of a ", op.name(), " op");
    const KernelSignature& sig = op.signature();
    out_ << "kernel @" << sig.name;
    if (!sig.sizes.empty()) {
      out_ << "[";
      for (size_t i = 0; i < sig.sizes.size(); ++i) out_ << (i ? ", " : "") << sig.sizes[i];
      out_ << "]";
    }
    out_ << "(";
    const Block& body = *op.region(0);
    for (size_t i = 0; i < body.arguments().size(); ++i) {
      const Value* arg = body.arguments()[i].get();
      out_ << (i ? ", " : "") << define(arg) << ": " << arg->type().str();
    }
    out_ << ")";
    if (!sig.facts.empty()) {
      out_ << " facts(";
      for (size_t i = 0; i < sig.facts.size(); ++i) {
        out_ << (i ? ", " : "") << sig.facts[i].symbol << " % " << sig.facts[i].divisor << " == 0";
      }
      out_ << ")";
    }
    if (!sig.ready.empty()) {
      out_ << " ready(";
      for (size_t i = 0; i < sig.ready.size(); ++i) {
        out_ << (i ? ", " : "") << "%" << body.argument(sig.ready[i])->name();
      }
      out_ << ")";
    }
    out_ << " {\n";
    block(body, 1);
    out_ << "}\n";
    return out_.str();
  }

 private:
  // Gives a value its printed name (unique in the kernel) and returns "%name".
  std::string define(const Value* value) {
    std::string base;
    for (char c : value->name()) {
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') base += c;
    }
    if (base.empty()) base = "v";
    std::string name = base;
    // A bare number would look like a positional name; keep hints readable and unique.
    for (int n = 1; used_.count(name); ++n) name = base + "_" + std::to_string(n);
    used_.insert(name);
    names_[value] = name;
    return "%" + name;
  }

  std::string use(const Value* value) {
    auto it = names_.find(value);
    TESSEL_ASSERT(it != names_.end(), "printing a use of a value that was never defined");
    return "%" + it->second;
  }

  void indent(int depth) {
    for (int i = 0; i < depth; ++i) out_ << "  ";
  }

  void block(const Block& b, int depth) {
    for (const auto& op : b.ops()) operation(*op, depth);
  }

  void results(const Operation& op) {
    if (op.num_results() == 0) return;
    for (int i = 0; i < op.num_results(); ++i) out_ << (i ? ", " : "") << define(op.result(i));
    out_ << " = ";
  }

  void result_types(const Operation& op) {
    if (op.num_results() == 0) return;
    out_ << " : ";
    for (int i = 0; i < op.num_results(); ++i)
      out_ << (i ? ", " : "") << op.result(i)->type().str();
  }

  void attributes(const Operation& op) {
    if (op.attributes().empty()) return;
    out_ << " {";
    bool first = true;
    for (const auto& [key, value] : op.attributes()) {
      out_ << (first ? "" : ", ") << key;
      if (value.kind != Attribute::Kind::unit) out_ << " = " << value.str();
      first = false;
    }
    out_ << "}";
  }

  void operation(const Operation& op, int depth) {
    indent(depth);
    switch (op.kind()) {
      case OpKind::for_:
        for_op(op, depth);
        return;
      case OpKind::if_:
        if_op(op, depth);
        return;
      case OpKind::kernel:
        TESSEL_ASSERT(false, "a kernel nested in a kernel");
        return;
      default:
        break;
    }
    results(op);
    out_ << op.name();
    for (int i = 0; i < op.num_operands(); ++i) out_ << (i ? ", " : " ") << use(op.operand(i));
    attributes(op);
    result_types(op);
    // A generic op with a region (a warp_group): the region follows, one op per line.
    for (const auto& region : op.regions()) {
      out_ << " {\n";
      block(*region, depth + 1);
      indent(depth);
      out_ << "}";
    }
    out_ << "\n";
  }

  void for_op(const Operation& op, int depth) {
    results(op);
    const Block& body = *op.region(0);
    out_ << "for " << define(body.argument(0)) << " = " << use(op.operand(0)) << " to "
         << use(op.operand(1)) << " step " << use(op.operand(2));
    if (op.num_operands() > 3) {
      out_ << " iter(";
      for (int i = 3; i < op.num_operands(); ++i) {
        out_ << (i > 3 ? ", " : "") << define(body.argument(i - 2)) << " = " << use(op.operand(i));
      }
      out_ << ")";
    }
    attributes(op);
    result_types(op);
    out_ << " {\n";
    block(body, depth + 1);
    indent(depth);
    out_ << "}\n";
  }

  void if_op(const Operation& op, int depth) {
    results(op);
    out_ << "if " << use(op.operand(0));
    attributes(op);
    result_types(op);
    out_ << " {\n";
    block(*op.region(0), depth + 1);
    indent(depth);
    out_ << "}";
    if (!op.region(1)->ops().empty()) {
      out_ << " else {\n";
      block(*op.region(1), depth + 1);
      indent(depth);
      out_ << "}";
    }
    out_ << "\n";
  }

  std::ostringstream out_;
  std::set<std::string> used_;
  std::unordered_map<const Value*, std::string> names_;
};

}  // namespace

std::string print_kernel(const Operation& kernel) {
  return Printer().kernel(kernel);
}

std::string print(const Module& module) {
  std::string out;
  for (size_t i = 0; i < module.kernels.size(); ++i) {
    if (i) out += "\n";
    out += print_kernel(*module.kernels[i]);
  }
  return out;
}

}  // namespace tessel::ir
