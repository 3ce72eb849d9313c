// Runs another program with its standard output and error read through one pipe: for the
// service benchmark (which starts `transduce serve`) and for tests of long-running commands.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace transduce {

class ChildProcess {
 public:
  // argv[0] is the program (looked up in PATH when it has no slash). Throws transduce::Error
  // when the process cannot be started.
  explicit ChildProcess(const std::vector<std::string>& argv);
  // Kills (SIGKILL) and reaps the child if it is still running.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Reads output until `text` appears in it, the output ends, or `timeout` passes; returns
  // whether it appeared.
  bool wait_for_output(const std::string& text, std::chrono::milliseconds timeout);
  // Everything read so far.
  const std::string& output() const { return output_; }
  void signal(int sig);
  // Reads the rest of the output and waits for the exit: the exit code, or 128 + the signal
  // that ended it.
  int wait();
  pid_t pid() const { return pid_; }

 private:
  bool read_some(int timeout_ms);

  pid_t pid_ = -1;
  int out_ = -1;
  std::string output_;
  bool exited_ = false;
  int status_ = 0;
};

}  // namespace transduce
