// A progress line on stderr for runs that last ("sweep: lab-cnn cpu.auto batch 32 (3/8)  12s"),
// rewritten in place with \r. Drawn only when stderr is a terminal, and only once the run has
// lasted a couple of seconds: pipes, files and the tests never see it, nor do short runs.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace convlab {

class Progress {
 public:
  static constexpr std::chrono::milliseconds kDelay{2000};

  // Draws on `out` (every 200 ms, from its own thread) when `enabled`, once `delay` has passed.
  Progress(std::FILE* out, bool enabled, std::chrono::milliseconds delay = kDelay);
  // On stderr, enabled when stderr is a terminal.
  Progress();
  ~Progress();  // stops and clears the line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void set(std::string text);  // what runs now; empty: nothing to show
  // Runs `print` (which writes to stdout) with the line cleared first, so rows never mix with it.
  void above(const std::function<void()>& print);

 private:
  void draw();  // with mutex_ held
  void clear();

  std::FILE* out_;
  bool enabled_;
  std::chrono::milliseconds delay_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::mutex mutex_;
  std::condition_variable_any wake_;
  std::string text_;
  bool drawn_ = false;
  std::jthread ticker_;  // last: started after everything it reads
};

}  // namespace convlab
