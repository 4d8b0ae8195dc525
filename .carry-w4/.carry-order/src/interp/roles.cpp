// The role scheduler and the schedules.
#include "interp/roles.h"

#include <algorithm>
#include <cstdlib>

namespace tessel::interp {
namespace {

// Thrown at a role's sync point to unwind it when the run stops (another role failed, or the
// block deadlocked). Not a std::exception, so nothing on the way catches it by accident.
struct RoleStopped {};

bool is_producer(const ir::Operation& role) {
  return role.has_attr("role") && role.str_attr("role") == "producer";
}

// "role producer (warp_group at f.tir:14:3)".
std::string role_ref(const ir::Operation& role) {
  return "role " + (role.has_attr("role") ? role.str_attr("role") : std::string("?")) + " (" +
         ir::op_where(role) + ")";
}

// "aref_acquire %ring, %k at f.tir:18:7".
std::string op_with_operands(const ir::Operation& op) {
  std::string out(op.name());
  for (int i = 0; i < op.num_operands(); ++i)
    out += (i ? ", " : " ") + ir::value_ref(op.operand(i));
  return op.loc().is_known() ? out + " at " + op.loc().str() : out;
}

}  // namespace

Schedule Schedule::parse(const std::string& text) {
  Schedule s;
  if (text == "round-robin") return s;
  if (text == "producer-first") {
    s.kind = Kind::producer_first;
    return s;
  }
  if (text == "consumer-first") {
    s.kind = Kind::consumer_first;
    return s;
  }
  if (text == "random" || text.rfind("random:", 0) == 0) {
    s.kind = Kind::random;
    if (text != "random") {
      std::string digits = text.substr(7);
      char* end = nullptr;
      s.seed = std::strtoull(digits.c_str(), &end, 10);
      if (digits.empty() || *end != '\0' || digits[0] == '-') {
        user_error(SourceLocation::unknown(), "schedule '", text,
                   "': the seed after random: must be a non-negative integer");
      }
    }
    return s;
  }
  user_error(SourceLocation::unknown(), "unknown schedule '", text,
             "' (round-robin, producer-first, consumer-first, random:SEED)");
}

std::string Schedule::str() const {
  switch (kind) {
    case Kind::round_robin:
      return "round-robin";
    case Kind::producer_first:
      return "producer-first";
    case Kind::consumer_first:
      return "consumer-first";
    case Kind::random:
      return "random:" + std::to_string(seed);
  }
  return "?";
}

RoleScheduler::RoleScheduler(const Schedule& schedule) : schedule_(schedule), rng_(schedule.seed) {}

void RoleScheduler::pass_baton(int to, int me) {
  std::unique_lock<std::mutex> lock(mutex_);
  current_ = to;
  turn_.notify_all();
  turn_.wait(lock, [&] { return current_ == me; });
}

void RoleScheduler::role_main(int index) {
  RoleThread& role = roles_[index];
  {
    std::unique_lock<std::mutex> lock(mutex_);
    turn_.wait(lock, [&] { return current_ == index; });
  }
  if (!abort_) {
    try {
      role.body();
    } catch (const RoleStopped&) {
    } catch (...) {
      role.error = std::current_exception();
    }
  }
  role.finished = true;
  role.ready = nullptr;
  role.waits_for = nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  current_ = kScheduler;
  turn_.notify_all();
}

void RoleScheduler::sync_point(const ir::Operation& op, std::function<bool()> ready,
                               std::function<std::string()> waits_for) {
  int me = current_;
  TESSEL_ASSERT(me >= 0 && me < static_cast<int>(roles_.size()),
                "sync_point outside a running role at ", ir::op_where(op));
  RoleThread& role = roles_[me];
  role.at = &op;
  role.ready = std::move(ready);
  role.waits_for = std::move(waits_for);
  pass_baton(kScheduler, me);
  if (abort_) throw RoleStopped{};
  role.ready = nullptr;
  role.waits_for = nullptr;
}

void RoleScheduler::add_transfer(std::function<void()> land) {
  transfers_.push_back(std::move(land));
}

RoleScheduler::Choice RoleScheduler::pick(const std::vector<int>& ready) {
  const int n = static_cast<int>(roles_.size());
  auto is_ready = [&](int i) { return std::find(ready.begin(), ready.end(), i) != ready.end(); };
  auto first_ready = [&](bool producers) {
    for (int i : ready) {
      if (is_producer(*roles_[i].op) == producers) return i;
    }
    return -1;
  };
  Choice c;
  switch (schedule_.kind) {
    case Schedule::Kind::round_robin:
      // Actors 0..n-1 are the roles, n the copy engine (which lands the oldest copy).
      for (int step = 1; step <= n + 1; ++step) {
        int a = (last_ + step) % (n + 1);
        if ((a < n && is_ready(a)) || (a == n && !transfers_.empty())) {
          last_ = a;
          c.role = a < n ? a : -1;
          return c;
        }
      }
      break;
    case Schedule::Kind::producer_first:
      c.role = first_ready(true);
      if (c.role < 0) c.role = first_ready(false);
      return c;
    case Schedule::Kind::consumer_first:
      c.role = first_ready(false);
      if (c.role < 0 && transfers_.empty()) c.role = first_ready(true);
      return c;
    case Schedule::Kind::random: {
      size_t k =
          std::uniform_int_distribution<size_t>(0, ready.size() + transfers_.size() - 1)(rng_);
      if (k < ready.size()) {
        c.role = ready[k];
      } else {
        c.transfer = k - ready.size();
      }
      return c;
    }
  }
  TESSEL_ASSERT(false, "the schedule found nothing to run");
}

std::string RoleScheduler::deadlock_message(const std::string& where) const {
  std::string out = "deadlock in " + where + ": every unfinished role is blocked";
  for (const RoleThread& role : roles_) {
    if (role.finished) continue;
    out += "; " + role_ref(*role.op) + " at " + op_with_operands(*role.at);
    if (role.waits_for) out += ", which " + role.waits_for();
  }
  return out;
}

void RoleScheduler::stop_roles() {
  abort_ = true;
  for (size_t i = 0; i < roles_.size(); ++i) {
    if (!roles_[i].finished && roles_[i].thread.joinable())
      pass_baton(static_cast<int>(i), kScheduler);
  }
  for (RoleThread& role : roles_) {
    if (role.thread.joinable()) role.thread.join();
  }
}

void RoleScheduler::run(std::vector<Role> roles, const std::string& where) {
  roles_.clear();
  transfers_.clear();
  abort_ = false;
  last_ = -1;
  current_ = kScheduler;
  // Every RoleThread exists before any thread starts: the threads hold references into roles_.
  roles_.resize(roles.size());
  for (size_t i = 0; i < roles.size(); ++i) {
    roles_[i].op = roles[i].op;
    roles_[i].body = std::move(roles[i].body);
  }
  for (size_t i = 0; i < roles_.size(); ++i) {
    roles_[i].thread = std::thread(&RoleScheduler::role_main, this, static_cast<int>(i));
  }
  try {
    while (true) {
      bool all_finished = true;
      std::vector<int> ready;
      for (size_t i = 0; i < roles_.size(); ++i) {
        RoleThread& role = roles_[i];
        if (role.error) std::rethrow_exception(role.error);
        if (role.finished) continue;
        all_finished = false;
        if (!role.ready || role.ready()) ready.push_back(static_cast<int>(i));
      }
      // Copies still in flight when every role is done land in issue order: nobody can observe
      // their order any more, only that they land.
      if (all_finished && transfers_.empty()) break;
      if (ready.empty() && transfers_.empty()) {
        const RoleThread* first = nullptr;
        for (const RoleThread& role : roles_) {
          if (!role.finished && !first) first = &role;
        }
        user_error(first->at->loc(), deadlock_message(where));
      }
      Choice c = all_finished ? Choice{} : pick(ready);
      if (c.role >= 0) {
        pass_baton(c.role, kScheduler);
      } else {
        std::function<void()> land = std::move(transfers_[c.transfer]);
        transfers_.erase(transfers_.begin() + static_cast<std::ptrdiff_t>(c.transfer));
        land();
      }
    }
  } catch (...) {
    stop_roles();
    throw;
  }
  stop_roles();
}

}  // namespace tessel::interp
