#include "bench/harness/progress.hpp"

#include <unistd.h>

#include <fmt/format.h>

namespace convlab {

Progress::Progress(std::FILE* out, bool enabled, std::chrono::milliseconds delay)
    : out_(out), enabled_(enabled), delay_(delay) {
  if (!enabled_) return;  // no thread at all: a piped run pays nothing
  ticker_ = std::jthread([this](std::stop_token stop) {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, stop, std::chrono::milliseconds(200), [] { return false; })) {
      if (stop.stop_requested()) return;
      draw();
    }
  });
}

Progress::Progress() : Progress(stderr, isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() {
  if (!enabled_) return;
  ticker_.request_stop();
  ticker_.join();
  clear();
}

void Progress::set(std::string text) {
  const std::lock_guard lock(mutex_);
  text_ = std::move(text);
}

void Progress::above(const std::function<void()>& print) {
  const std::lock_guard lock(mutex_);
  clear();
  print();
  std::fflush(stdout);
}

void Progress::draw() {
  const auto elapsed = std::chrono::steady_clock::now() - start_;
  if (elapsed < delay_) return;
  if (text_.empty()) return clear();
  // \033[K erases what a longer previous line left.
  fmt::print(out_, "\r{}  {}s\033[K", text_, std::chrono::duration_cast<std::chrono::seconds>(elapsed).count());
  std::fflush(out_);
  drawn_ = true;
}

void Progress::clear() {
  if (!drawn_) return;
  fmt::print(out_, "\r\033[K");
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace convlab
