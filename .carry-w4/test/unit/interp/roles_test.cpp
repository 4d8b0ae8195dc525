// Warp-specialized kernels in the interpreter: the hand-written GEMMs of test/lit/async/ at both
// levels (arefs; mbarriers) under every schedule match the plain GEMM bit for bit, and broken
// variants of them (made by editing their text here) fail with the message that names the bug —
// or, where the bug only changes data, with a wrong result under an adversarial schedule.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "interp/interpreter.h"
#include "ir/barrier_model.h"
#include "ir/parser.h"
#include "ir/verifier.h"

namespace tessel::interp {
namespace {

std::string source(const std::string& path) {
  std::ifstream in(std::string(TESSEL_SOURCE_DIR) + "/" + path);
  EXPECT_TRUE(in) << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string& plain_gemm() {
  static const std::string text = source("examples/kernels/gemm.tir");
  return text;
}
const std::string& aref_gemm() {
  static const std::string text = source("test/lit/async/gemm_arefs.tir");
  return text;
}
const std::string& barrier_gemm() {
  static const std::string text = source("test/lit/async/gemm_barriers.tir");
  return text;
}

// `text` with the first occurrence of `from` in the kernel (not in the comments above it) replaced
// by `to`, which must occur: an edit that misses would test the unbroken kernel.
std::string edit(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from, text.find("\nkernel @"));
  EXPECT_NE(at, std::string::npos) << "not in the kernel: " << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

struct Shape {
  int64_t m, n, k;
};

// C = A B^T on fresh random f16 inputs (from `seed`); C starts as NaN so that an element nobody
// writes shows.
HostTensor run_gemm(const std::string& text, Shape s, const Schedule& schedule, uint64_t seed) {
  auto module = ir::parse_module(text, "gemm.tir");
  ir::verify(*module);
  HostTensor A(ScalarKind::f16, {s.m, s.k}), B(ScalarKind::f16, {s.n, s.k}),
      C(ScalarKind::f16, {s.m, s.n});
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  for (int64_t i = 0; i < A.size(); ++i) A.set_float(i, real(rng));
  for (int64_t i = 0; i < B.size(); ++i) B.set_float(i, real(rng));
  for (int64_t i = 0; i < C.size(); ++i) C.set_float(i, std::nan(""));
  RunOptions options;
  options.sizes = {{"M", s.m}, {"N", s.n}, {"K", s.k}};
  options.schedule = schedule;
  interpret(*module->kernels[0], {&A, &B, &C}, options);
  return C;
}

std::vector<Schedule> every_schedule() {
  std::vector<Schedule> out;
  for (const char* name : {"round-robin", "producer-first", "consumer-first", "random:1",
                           "random:2", "random:3", "random:1234"}) {
    out.push_back(Schedule::parse(name));
  }
  return out;
}

// The message of the UserError that running `text` throws ("" when it runs to the end).
std::string error_of(const std::string& text, Shape s, const Schedule& schedule) {
  try {
    run_gemm(text, s, schedule, 7);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

bool same_bits(const HostTensor& a, const HostTensor& b) {
  return a.bytes() == b.bytes();
}

// M and N are not tile multiples; K below one ring of 4 slots of 64 (200, 64) and above it
// (520: slots are reused, 9 k-tiles).
const Shape kShapes[] = {{129, 257, 200}, {129, 257, 64}, {129, 257, 520}};

void expect_matches_plain_gemm(const std::string& text) {
  uint64_t seed = 11;
  for (Shape s : kShapes) {
    HostTensor want = run_gemm(plain_gemm(), s, Schedule{}, seed);
    for (const Schedule& schedule : every_schedule()) {
      HostTensor got = run_gemm(text, s, schedule, seed);
      EXPECT_TRUE(same_bits(got, want))
          << "M=" << s.m << " N=" << s.n << " K=" << s.k << " schedule " << schedule.str();
    }
    ++seed;  // fresh inputs for every shape
  }
}

TEST(Roles, ArefGemmMatchesThePlainGemmUnderEverySchedule) {
  expect_matches_plain_gemm(aref_gemm());
}

TEST(Roles, BarrierGemmMatchesThePlainGemmUnderEverySchedule) {
  expect_matches_plain_gemm(barrier_gemm());
}

TEST(Roles, PersistentGemmsMatchThePlainGemmUnderEverySchedule) {
  // Blocks that take several tiles (sm_count = 3 over 2 x 2 tiles), aref numbers counting on
  // across tiles, and the epilogue staged through shared memory with TMA stores.
  Shape s{257, 257, 200};
  HostTensor want = run_gemm(plain_gemm(), s, Schedule{}, 5);
  for (const char* file : {"test/lit/async/gemm_persistent_barriers.tir",
                           "test/lit/async/gemm_persistent_tma_store.tir"}) {
    for (const Schedule& schedule : every_schedule()) {
      EXPECT_TRUE(same_bits(run_gemm(source(file), s, schedule, 5), want))
          << file << " schedule " << schedule.str();
    }
  }
}

TEST(Roles, AMissingReleaseDeadlocks) {
  // The consumer never releases a slot inside the loop: once the ring is full (K = 520 needs 9
  // sequence numbers, the ring holds 4) the producer waits for a release that never comes while
  // the consumer waits for a commit.
  std::string broken = edit(aref_gemm(), "        aref_release %ring, %prev\n", "");
  for (const Schedule& schedule : every_schedule()) {
    std::string message = error_of(broken, {129, 257, 520}, schedule);
    EXPECT_NE(message.find("error: deadlock in block [0, 0]: every unfinished role is blocked; "
                           "role producer (warp_group at gemm.tir:32:3) at aref_acquire %ring, "
                           "%k at gemm.tir:36:7, which waits for the release of sequence number "
                           "0 of %ring (slot 0 holds sequence number 0, waited, not released); "
                           "role consumer (warp_group at gemm.tir:42:3) at aref_wait %ring, %k "
                           "at gemm.tir:45:7, which waits for the commit of sequence number 4 of "
                           "%ring (slot 0 holds sequence number 0, waited, not released)"),
              std::string::npos)
        << schedule.str() << ": " << message;
  }
  // With a ring that never fills the same kernel reaches its last release out of order.
  EXPECT_NE(error_of(broken, {129, 257, 200}, Schedule{})
                .find("gemm.tir:60:7: error: aref_release %ring, %last: sequence number 3 is out "
                      "of order: the next aref_release of %ring is sequence number 0"),
            std::string::npos);
}

// The consumer releases sequence number k right after committing the group that reads it, before
// the mma_wait that retires the group: the producer may then refill the slot while the wgmma
// still reads it.
std::string release_before_mma_wait() {
  std::string text = edit(aref_gemm(),
                          "      mma_commit\n"
                          "      mma_wait {pending = 1}\n"
                          "      %has_prev = cmp %k, %c1 {pred = ge} : i1\n"
                          "      if %has_prev {\n"
                          "        %prev = sub %k, %c1 : index\n"
                          "        aref_release %ring, %prev\n"
                          "      }\n",
                          "      mma_commit\n"
                          "      aref_release %ring, %k\n"
                          "      mma_wait {pending = 1}\n");
  return edit(text, "      aref_release %ring, %last\n", "");
}

TEST(Roles, ReleaseBeforeTheMmaWaitComputesGarbageUnderProducerFirst) {
  Shape s{129, 257, 520};
  HostTensor want = run_gemm(plain_gemm(), s, Schedule{}, 9);
  std::string broken = release_before_mma_wait();
  // The async mma reads its slot when its group retires; by then the producer, run as far as it
  // goes, has overwritten the slot with sequence number k + 4.
  EXPECT_FALSE(same_bits(run_gemm(broken, s, Schedule::parse("producer-first"), 9), want));
  // A schedule that runs the consumer first hides the race: that is why the adversarial ones
  // exist.
  EXPECT_TRUE(same_bits(run_gemm(broken, s, Schedule::parse("consumer-first"), 9), want));
}

TEST(Roles, RandomSchedulesAreDeterministic) {
  // The racy kernel gives the same (wrong) answer for the same seed, every time.
  Shape s{129, 257, 520};
  Schedule schedule = Schedule::parse("random:5");
  std::string racy = release_before_mma_wait();
  EXPECT_TRUE(same_bits(run_gemm(racy, s, schedule, 3), run_gemm(racy, s, schedule, 3)));
}

TEST(Roles, ReadingAnAsyncMmaResultBeforeItsWaitIsAnError) {
  // Without the final mma_wait the cast reads the accumulator while the last group is in flight.
  std::string broken = edit(aref_gemm(), "    mma_wait {pending = 0}\n", "");
  for (const Schedule& schedule : every_schedule()) {
    std::string message = error_of(broken, {129, 257, 200}, schedule);
    EXPECT_NE(message.find("gemm.tir:63:5: error: cast: reads %c_next, the result of the async "
                           "mma at gemm.tir:47:7, before the mma_wait that retires it"),
              std::string::npos)
        << schedule.str() << ": " << message;
  }
  // Nor may a synchronous mma use it as its accumulator.
  std::string sync_reader = edit(aref_gemm(), "      mma_commit\n",
                                 "      %x = mma %sA, %sBt, %c_next : register<f32, "
                                 "(((4,8,4),2),(2,2,32)):(((256,1,16),64),(128,8,1024))>[128,256]\n"
                                 "      mma_commit\n");
  EXPECT_NE(error_of(sync_reader, {129, 257, 200}, Schedule{})
                .find("error: mma: reads %c_next, the result of the async mma at gemm.tir:47:7, "
                      "before the mma_wait that retires it"),
            std::string::npos);
}

TEST(Roles, AProducerThatRunsAheadIsAnErrorAtTheEnd) {
  // One iteration more in the producer: sequence number 4 is committed and nobody waits for it.
  std::string broken = edit(aref_gemm(), "    for %k = %c0 to %tiles_k step %c1 {",
                            "    %more = add %tiles_k, %c1 : index\n"
                            "    for %k = %c0 to %more step %c1 {");
  for (const Schedule& schedule : every_schedule()) {
    std::string message = error_of(broken, {129, 257, 200}, schedule);
    EXPECT_NE(message.find("gemm.tir:31:3: error: aref %ring: sequence number(s) 4 were "
                           "committed (the last by aref_commit %ring, %k at gemm.tir:40:7) but no "
                           "role waited for them: the producer ran ahead of its consumer"),
              std::string::npos)
        << schedule.str() << ": " << message;
  }
}

TEST(Roles, ArefProtocolErrorsNameTheArefAndTheOp) {
  Shape s{129, 257, 200};
  // A producer that never commits ends holding its slots.
  std::string no_commit = edit(aref_gemm(), "      aref_commit %ring, %k\n", "");
  EXPECT_NE(error_of(no_commit, s, Schedule::parse("producer-first"))
                .find("gemm.tir:32:3: error: role producer (warp_group at gemm.tir:32:3) ends "
                      "with sequence number(s) 0..3 of %ring acquired (by aref_acquire %ring, %k "
                      "at gemm.tir:36:7) but never committed"),
            std::string::npos);
  // Committing a number that was not acquired.
  std::string ahead = edit(aref_gemm(), "      aref_commit %ring, %k\n",
                           "      %k1 = add %k, %c1 : index\n      aref_commit %ring, %k1\n");
  EXPECT_NE(
      error_of(ahead, s, Schedule{})
          .find("error: aref_commit %ring, %k1: commits sequence number 1 of %ring, which was not "
                "acquired (acquired so far: 0)"),
      std::string::npos);
  // Releasing a number that was not waited for.
  std::string early = edit(aref_gemm(), "        aref_release %ring, %prev\n",
                           "        %next = add %k, %c1 : index\n"
                           "        aref_release %ring, %next\n");
  EXPECT_NE(
      error_of(early, s, Schedule{})
          .find("error: aref_release %ring, %next: releases sequence number 2 of %ring, which was "
                "not waited for (waited so far: 0..1)"),
      std::string::npos);
}

TEST(Roles, AWrongParityDeadlocksOrReadsStaleData) {
  Shape s{129, 257, 520};
  // The producer waits for the empty barrier's phase 0 instead of the fresh barrier's "previous"
  // phase 1: nothing ever completes it.
  std::string producer = edit(barrier_gemm(), "mbarrier_wait %ring_empty, %slot, %empty_parity",
                              "mbarrier_wait %ring_empty, %slot, %phase");
  for (const Schedule& schedule : every_schedule()) {
    std::string message = error_of(producer, s, schedule);
    EXPECT_NE(message.find("error: deadlock in block [0, 0]: every unfinished role is blocked; "
                           "role producer (warp_group at gemm.tir:65:3) at mbarrier_wait "
                           "%ring_empty, %slot, %phase at gemm.tir:74:7, which waits for the "
                           "phase of %ring_empty[0] with parity 0 (%ring_empty[0] is at phase 0 "
                           "(parity 0): 2 of 2 arrival(s) pending, 0 byte(s) pending); role "
                           "consumer"),
              std::string::npos)
        << schedule.str() << ": " << message;
  }
  // The consumer waits on the flipped parity: it passes before the data lands, so it reads a slot
  // nobody wrote, or stale data, or (when it falls out of step) deadlocks; never the right C.
  std::string consumer = edit(barrier_gemm(), "      mbarrier_wait %ring_full, %slot, %full_parity",
                              "      %wrong = sub %c1, %full_parity : index\n"
                              "      mbarrier_wait %ring_full, %slot, %wrong");
  HostTensor want = run_gemm(plain_gemm(), s, Schedule{}, 7);
  int errors = 0;
  for (const Schedule& schedule : every_schedule()) {
    try {
      HostTensor got = run_gemm(consumer, s, schedule, 7);
      EXPECT_FALSE(same_bits(got, want)) << schedule.str();
    } catch (const UserError& e) {
      std::string message = e.what();
      bool expected = message.find("before anything wrote it") != std::string::npos ||
                      message.find("error: deadlock in block") != std::string::npos;
      EXPECT_TRUE(expected) << schedule.str() << ": " << message;
      ++errors;
    }
  }
  EXPECT_GT(errors, 0);
}

TEST(Roles, BarrierErrorsNameTheBarrier) {
  Shape s{129, 257, 200};
  // Every consumer thread arrives on a barrier that expects one arrival per warpgroup.
  std::string by_thread =
      edit(barrier_gemm(), "mbarrier_arrive %ring_empty, %prev_slot {by = warpgroup}",
           "mbarrier_arrive %ring_empty, %prev_slot {by = thread}");
  EXPECT_NE(
      error_of(by_thread, s, Schedule{})
          .find("error: mbarrier_arrive %ring_empty, %prev_slot: 256 arrival(s) on %ring_empty[0], "
                "whose phase has only 2 pending: more arrivals than the arrivals = 2 of its "
                "mbarrier_init"),
      std::string::npos);
  // A barrier index outside the array, and a parity that is not one.
  std::string index = edit(barrier_gemm(), "      mbarrier_wait %ring_full, %slot, %full_parity",
                           "      mbarrier_wait %ring_full, %c4, %full_parity");
  EXPECT_NE(
      error_of(index, s, Schedule{})
          .find("error: mbarrier_wait %ring_full, %c4, %full_parity: barrier index 4 lies outside "
                "%ring_full, an array of 4 mbarrier(s)"),
      std::string::npos);
  std::string parity = edit(barrier_gemm(), "      mbarrier_wait %ring_full, %slot, %full_parity",
                            "      mbarrier_wait %ring_full, %slot, %c2");
  EXPECT_NE(error_of(parity, s, Schedule{})
                .find("error: mbarrier_wait %ring_full, %slot, %c2: the parity is 2, not 0 or 1"),
            std::string::npos);
}

TEST(Roles, SchedulesParseAndPrint) {
  for (const char* name : {"round-robin", "producer-first", "consumer-first", "random:42"}) {
    EXPECT_EQ(Schedule::parse(name).str(), name);
  }
  EXPECT_EQ(Schedule::parse("random").str(), "random:0");
  for (const char* bad : {"fifo", "random:", "random:x", "random:-1"}) {
    EXPECT_THROW(Schedule::parse(bad), UserError) << bad;
  }
}

TEST(BarrierModel, PhasesCompleteOnArrivalsAndBytes) {
  ir::BarrierModel bar(2);
  // A fresh barrier: the "previous phase" (parity 1) counts as completed, phase 0 does not.
  EXPECT_TRUE(bar.phase_completed(1));
  EXPECT_FALSE(bar.phase_completed(0));
  EXPECT_EQ(bar.arrive(1, 100), ir::BarrierModel::Status::ok);
  EXPECT_EQ(bar.arrive(1), ir::BarrierModel::Status::ok);
  EXPECT_FALSE(bar.phase_completed(0));  // arrivals are in, 100 bytes are not
  EXPECT_EQ(bar.complete_bytes(60), ir::BarrierModel::Status::ok);
  EXPECT_EQ(bar.complete_bytes(40), ir::BarrierModel::Status::ok);
  EXPECT_TRUE(bar.phase_completed(0));
  EXPECT_FALSE(bar.phase_completed(1));
  EXPECT_EQ(bar.phase(), 1);
  EXPECT_EQ(bar.pending_arrivals(), 2);  // reloaded
  // Bytes may land before the expect_tx that announces them.
  EXPECT_EQ(bar.complete_bytes(8), ir::BarrierModel::Status::ok);
  EXPECT_EQ(bar.arrive(1, 8), ir::BarrierModel::Status::ok);
  EXPECT_EQ(bar.arrive(1), ir::BarrierModel::Status::ok);
  EXPECT_EQ(bar.phase(), 2);
  EXPECT_TRUE(bar.phase_completed(1));
  // Errors change nothing.
  EXPECT_EQ(bar.arrive(3), ir::BarrierModel::Status::too_many_arrivals);
  EXPECT_EQ(bar.arrive(2, 4), ir::BarrierModel::Status::ok);
  EXPECT_EQ(bar.complete_bytes(5), ir::BarrierModel::Status::too_many_bytes);
  EXPECT_EQ(bar.describe(), "phase 2 (parity 0): 0 of 2 arrival(s) pending, 4 byte(s) pending");
}

}  // namespace
}  // namespace tessel::interp
