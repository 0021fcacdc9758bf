//===- LLVMFatalErrors.cpp - LLVM's fatal errors as failures --------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// A fatal error calls the installed handler, then aborts or exits; a
// handler that does not return leaves both out. The frames between the
// error and the code that wants to go on cannot be unwound (LLVM is built
// without exceptions), and some of them hold objects that other code still
// points to: the timer the NVPTX serializer starts around code generation
// is linked into LLVM's default timer group, which reaches it again when
// the next timer is made and when the process ends. Jumping out of those
// frames, as a longjmp would, leaves such links to a stack that is then
// overwritten. So the guarded code runs on a thread of its own, whose
// handler reports the error and then parks the thread for good: its frames
// stay where they are, leaked, and intact.
//
//===----------------------------------------------------------------------===//

#include "LLVMFatalErrors.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Timer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/thread.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

using namespace mlir;

namespace {
/// What a guarded thread tells the thread waiting for it.
struct Outcome {
  std::mutex mutex;
  std::condition_variable changed;
  bool done = false;
  std::optional<std::string> fatal;

  void finish(std::optional<std::string> reason) {
    std::lock_guard<std::mutex> lock(mutex);
    fatal = std::move(reason);
    done = true;
    changed.notify_all();
  }
};
} // namespace

/// The outcome of the guarded code this thread runs, if it runs any.
static thread_local Outcome *currentOutcome = nullptr;

static void onFatalError(void *, const char *reason, bool) {
  if (Outcome *outcome = currentOutcome) {
    outcome->finish(std::string(reason));
    // Parked: nothing this thread was doing goes on, and nothing it owns is
    // freed.
    for (;;)
      std::this_thread::sleep_for(std::chrono::hours(24));
  }
  // What LLVM prints without a handler; it aborts or exits when this
  // returns.
  llvm::errs() << "LLVM ERROR: " << reason << "\n";
}

std::optional<std::string>
mlir::linattn::catchLLVMFatalErrors(llvm::function_ref<void()> fn) {
  static std::once_flag installed;
  std::call_once(installed,
                 [] { llvm::install_fatal_error_handler(onFatalError); });
  // Shared with the thread, which keeps it alive if it is parked.
  auto outcome = std::make_shared<Outcome>();
  // The stack a main thread usually has: code generation recurses.
  constexpr unsigned kStackBytes = 8 << 20;
  llvm::thread guarded(std::optional<unsigned>(kStackBytes), [fn, outcome] {
    currentOutcome = outcome.get();
    fn();
    currentOutcome = nullptr;
    outcome->finish(std::nullopt);
  });
  std::unique_lock<std::mutex> lock(outcome->mutex);
  outcome->changed.wait(lock, [&] { return outcome->done; });
  std::optional<std::string> fatal = outcome->fatal;
  lock.unlock();
  if (!fatal) {
    guarded.join();
    return std::nullopt;
  }
  guarded.detach();
  // The parked thread's timers are still running: cleared, LLVM does not
  // report them when the process ends.
  llvm::TimerGroup::clearAll();
  return fatal;
}
