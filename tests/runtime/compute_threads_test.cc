// While a job trains on one cpu device, the process runs no more threads that use CPU time than
// the device has kernel threads (no library pool spins beside them: OpenBLAS runs on the
// device's threads), and every thread the engine started is named "sw:..." for what it is.
//
// How "uses CPU time" is read: each thread's time on a core over a window of the running job,
// from /proc/self/task/TID/schedstat (nanoseconds). A thread counts when it ran for more than
// 2% of the window: on 2 cores the device's two threads run 40-50% of it each, the job's
// waiting threads (the watchdog, CAF's clock) a few microseconds or none. With OpenBLAS's own
// pool (RunOptions::blas_threads 2, the default before), its worker ran 45% of the window in
// sched_yield and products, and the device's second thread 9%: three threads on two cores.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "compiler/compiler.h"
#include "runtime/host/job_runner.h"

namespace softwire {
namespace {

using std::chrono::milliseconds;

struct ThreadSample {
  std::string name;
  int64_t on_cpu_ns = 0;
};

// Every thread of this process by id: its name and its time on a core so far.
std::map<int64_t, ThreadSample> SampleThreads() {
  std::map<int64_t, ThreadSample> threads;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    const std::string task = entry.path().filename().string();
    ThreadSample sample;
    std::ifstream comm("/proc/self/task/" + task + "/comm");
    std::ifstream schedstat("/proc/self/task/" + task + "/schedstat");
    if (!std::getline(comm, sample.name) || !(schedstat >> sample.on_cpu_ns)) continue;  // Ended.
    threads[std::stoll(task)] = sample;
  }
  return threads;
}

proto::Plan CompileBenchMlp() {
  StatusOr<compiler::JobFile> file = compiler::ParseJobFile("bench/training/mlp.pbtxt");
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return proto::Plan();
  compiler::CompileOptions options;
  options.steps = 2000;  // Far more than the test waits for: it cancels the run.
  StatusOr<proto::Plan> plan = compiler::CompileJob(*file, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : proto::Plan();
}

// Runs the MLP bench job on one cpu device with the machine's cores and calls `observe` once
// the first steps are done, while the job runs, with the id of the test's thread that runs it;
// then cancels it.
void WhileTraining(const std::function<void(const proto::Plan&, int64_t)>& observe) {
  proto::Plan plan = CompileBenchMlp();
  ASSERT_EQ(plan.device_size(), 1);
  ASSERT_EQ(plan.device(0).kind(), proto::DEVICE_KIND_CPU);
  std::mutex mutex;
  std::condition_variable warmed_up;
  int64_t steps = 0;
  runtime::RunOptions options;
  options.stall_timeout_seconds = 30;
  options.progress = [&](const runtime::StepResult&) {
    std::lock_guard<std::mutex> lock(mutex);
    ++steps;
    warmed_up.notify_all();
  };
  StatusOr<std::unique_ptr<runtime::LoadedPlan>> loaded = runtime::LoadedPlan::Load(plan, options);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  Status ran;
  std::atomic<int64_t> runner_id{0};
  std::thread runner([&] {
    runner_id = static_cast<int64_t>(syscall(SYS_gettid));
    ran = (*loaded)->Run().status();
  });
  bool running = false;
  {
    std::unique_lock<std::mutex> lock(mutex);
    running = warmed_up.wait_for(lock, std::chrono::seconds(60), [&] { return steps >= 5; });
  }
  if (running) observe(plan, runner_id.load());
  (*loaded)->Cancel("the test has seen enough");
  runner.join();
  EXPECT_TRUE(running) << "the job did not finish 5 steps in 60 s: " << ran;
  EXPECT_EQ(ran.code(), StatusCode::kCancelled) << ran;
}

TEST(ComputeThreadsTest, NoMoreThreadsUseCpuTimeThanTheDeviceHasKernelThreads) {
  WhileTraining([](const proto::Plan& plan, int64_t) {
    const int kernel_threads = std::max(1, plan.device(0).cores());
    constexpr milliseconds kWindow(600);
    std::map<int64_t, ThreadSample> before = SampleThreads();
    std::this_thread::sleep_for(kWindow);
    std::map<int64_t, ThreadSample> after = SampleThreads();
    int busy = 0;
    std::string report;
    for (const auto& [id, sample] : after) {
      auto earlier = before.find(id);
      const int64_t ran_ns =
          sample.on_cpu_ns - (earlier == before.end() ? 0 : earlier->second.on_cpu_ns);
      report += "  " + sample.name + ": " + std::to_string(ran_ns / 1000000) + " ms\n";
      if (ran_ns * 50 > std::chrono::nanoseconds(kWindow).count()) ++busy;
    }
    EXPECT_GE(busy, 1) << "nothing ran while the job trained:\n" << report;
    EXPECT_LE(busy, kernel_threads)
        << "threads on a core over " << kWindow.count() << " ms of training (device has "
        << kernel_threads << " kernel threads):\n"
        << report;
  });
}

// Libraries' threads count too: OpenBLAS starts its pool when it loads, before main, and the
// engine ends it, so while the job runs only the test's two threads are not the engine's.
TEST(ComputeThreadsTest, EveryThreadTheEngineStartsIsNamedForWhatItIs) {
  WhileTraining([&](const proto::Plan&, int64_t runner_id) {
    std::set<std::string> names;
    for (const auto& [id, sample] : SampleThreads()) {
      if (id == static_cast<int64_t>(getpid()) || id == runner_id) continue;  // The test's.
      names.insert(sample.name);
      EXPECT_EQ(sample.name.rfind("sw:", 0), 0u)
          << "thread " << id << " is named '" << sample.name << "'";
    }
    // The device's kernel threads: thread 0 is CAF's one worker, which holds the device's
    // strand and so is named for it; thread 1 is the device's own, on a 2-core machine.
    EXPECT_EQ(names.count("sw:cpu0/k0"), 1u);
    if (std::thread::hardware_concurrency() >= 2) {
      EXPECT_EQ(names.count("sw:cpu0/k1"), 1u);
    }
    EXPECT_EQ(names.count("sw:caf/0"), 0u) << "the one worker is the device's thread 0";
  });
}

}  // namespace
}  // namespace softwire
