// The CPU plugin's threads (thread_pool.hpp): every item of a loop runs once whoever takes it, a
// small loop stays on its caller, callers at once never add threads, idle workers sleep, and the
// thread count follows the settings and the process's CPU affinity.
#include "thread_pool.hpp"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace yirage::cpu {
namespace {

struct Counts {
  std::vector<std::atomic<int>> runs;
  std::atomic<int> off_caller{0};
  std::thread::id caller = std::this_thread::get_id();
  explicit Counts(int64_t n) : runs(static_cast<size_t>(n)) {}
};

void count_items(void *context, int64_t begin, int64_t end) {
  auto *counts = static_cast<Counts *>(context);
  for (int64_t i = begin; i < end; ++i) counts->runs[static_cast<size_t>(i)].fetch_add(1);
  if (std::this_thread::get_id() != counts->caller) counts->off_caller.fetch_add(1);
}

bool each_ran_once(const Counts &counts) {
  for (const std::atomic<int> &r : counts.runs) {
    if (r.load() != 1) return false;
  }
  return true;
}

TEST(ThreadPool, RunsEveryItemOnce) {
  ThreadPool pool(3);
  for (int64_t count : {1, 2, 7, 64, 1000, 100003}) {
    for (int64_t grain : {1, 3, 50}) {
      Counts counts(count);
      pool.parallel_for(count, grain, count_items, &counts);
      EXPECT_TRUE(each_ran_once(counts)) << count << " items, grain " << grain;
    }
  }
  EXPECT_LE(pool.started_workers(), 2);
}

TEST(ThreadPool, SmallLoopsStayOnTheCaller) {
  ThreadPool pool(4);
  Counts counts(100);
  pool.parallel_for(100, 51, count_items, &counts);  // fewer than 2 × grain
  EXPECT_TRUE(each_ran_once(counts));
  EXPECT_EQ(counts.off_caller.load(), 0);
  EXPECT_EQ(pool.started_workers(), 0) << "no worker is started for a loop that does not need one";
  ThreadPool alone(1);
  Counts more(10000);
  alone.parallel_for(10000, 1, count_items, &more);
  EXPECT_TRUE(each_ran_once(more));
  EXPECT_EQ(more.off_caller.load(), 0);
  EXPECT_EQ(alone.started_workers(), 0);
}

// Callers at once: each loop runs whole, on the workers or on its caller alone.
TEST(ThreadPool, CallersAtOnceNeverAddThreads) {
  ThreadPool pool(2);
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] {
      for (int round = 0; round < 200; ++round) {
        Counts counts(997);
        pool.parallel_for(997, 10, count_items, &counts);
        if (!each_ran_once(counts)) wrong.fetch_add(1);
      }
    });
  }
  for (std::thread &t : callers) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(pool.started_workers(), 1);
}

// The state letter of each of this process's threads named yirage-cpu (/proc/self/task).
std::vector<char> worker_states() {
  std::vector<char> states;
  DIR *tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return states;
  while (const dirent *e = readdir(tasks)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream stat(std::string("/proc/self/task/") + e->d_name + "/stat");
    std::string line;
    std::getline(stat, line);
    // "tid (comm) S ...": the name is between the parentheses.
    const size_t open = line.find('('), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close + 2 >= line.size()) continue;
    if (line.substr(open + 1, close - open - 1) == "yirage-cpu") states.push_back(line[close + 2]);
  }
  closedir(tasks);
  return states;
}

// Idle workers sleep (a spinning one would stay runnable, state R).
TEST(ThreadPool, IdleWorkersSleep) {
  ThreadPool pool(3);
  Counts counts(100000);
  pool.parallel_for(100000, 100, count_items, &counts);
  ASSERT_TRUE(each_ran_once(counts));
  ASSERT_EQ(worker_states().size(), 2u);
  // A worker spins for microseconds before it sleeps; a loaded machine may be slow to run it.
  bool asleep = false;
  for (int tries = 0; tries < 500 && !asleep; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    asleep = true;
    for (char state : worker_states()) asleep = asleep && state == 'S';
  }
  EXPECT_TRUE(asleep) << "the workers still run 5 s after their loop";
}

// Runs thread_count() in a child (whose environment and affinity are its own) with `name`=`value`
// set, and on one CPU where `one_cpu`: what it gave, its source and its warning as one line.
std::string count_in_child(const char *name, const char *value, bool one_cpu = false) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    unsetenv("YIRAGE_CPU_THREADS");
    unsetenv("OMP_NUM_THREADS");
    if (name != nullptr) setenv(name, value, 1);
    if (one_cpu) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(sched_getcpu(), &set);
      if (sched_setaffinity(0, sizeof set, &set) != 0) _exit(2);
    }
    std::string source, warning;
    const std::string line = std::to_string(thread_count(&source, &warning)) + " | " + source + " | " + warning;
    _exit(write(fds[1], line.data(), line.size()) == static_cast<ssize_t>(line.size()) ? 0 : 3);
  }
  close(fds[1]);
  std::string result;
  char buffer[512];
  ssize_t n;
  while ((n = read(fds[0], buffer, sizeof buffer)) > 0) result.append(buffer, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  if (pid > 0) waitpid(pid, &status, 0);
  return result;
}

TEST(ThreadCount, FollowsTheSettingsThenTheAffinity) {
  EXPECT_EQ(count_in_child("YIRAGE_CPU_THREADS", "3"), "3 | YIRAGE_CPU_THREADS | ");
  EXPECT_EQ(count_in_child("OMP_NUM_THREADS", "5,2"), "5 | OMP_NUM_THREADS | ");
  EXPECT_EQ(count_in_child(nullptr, nullptr, true), "1 | the CPUs this process may run on | ");
  const std::string bad = count_in_child("YIRAGE_CPU_THREADS", "many", true);
  EXPECT_EQ(bad,
            "1 | the CPUs this process may run on | cpu: YIRAGE_CPU_THREADS='many' is not a positive "
            "integer; ignored");
  EXPECT_EQ(count_in_child("OMP_NUM_THREADS", "0", true).substr(0, 4), "1 | ");
}

}  // namespace
}  // namespace yirage::cpu
