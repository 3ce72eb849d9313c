#include "core/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace transduce {

ChildProcess::ChildProcess(const std::vector<std::string>& argv) {
  if (argv.empty()) fail("no program to run");
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) fail("pipe: {}", std::strerror(errno));
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ < 0) fail("fork: {}", std::strerror(errno));
  if (pid_ == 0) {
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::dup2(pipe_fds[1], STDERR_FILENO);
    // Signals blocked by the parent's threads stay blocked across exec: unblock them.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execvp(args[0], args.data());
    const std::string msg = "cannot run " + argv[0] + ": " + std::strerror(errno) + "\n";
    [[maybe_unused]] ssize_t ignored = ::write(STDERR_FILENO, msg.data(), msg.size());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  out_ = pipe_fds[0];
}

ChildProcess::~ChildProcess() {
  if (!exited_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (out_ >= 0) ::close(out_);
}

bool ChildProcess::read_some(int timeout_ms) {
  if (out_ < 0) return false;
  pollfd p{out_, POLLIN, 0};
  const int ready = ::poll(&p, 1, timeout_ms);
  if (ready <= 0) return ready == 0 || errno == EINTR;
  char buf[4096];
  const ssize_t n = ::read(out_, buf, sizeof buf);
  if (n > 0) {
    output_.append(buf, static_cast<size_t>(n));
    return true;
  }
  if (n < 0 && errno == EINTR) return true;
  ::close(out_);  // the end of the output
  out_ = -1;
  return false;
}

bool ChildProcess::wait_for_output(const std::string& text, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (output_.find(text) == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !read_some(static_cast<int>(left.count()))) break;
  }
  return output_.find(text) != std::string::npos;
}

void ChildProcess::signal(int sig) {
  if (!exited_) ::kill(pid_, sig);
}

int ChildProcess::wait() {
  while (read_some(-1)) {
  }
  if (!exited_) {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    exited_ = true;
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  return status_;
}

}  // namespace transduce
