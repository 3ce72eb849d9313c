#include "support/run_command.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

namespace transduce::testing {

void expect_one_line_error(const CommandResult& r, const std::string& says) {
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_EQ(r.out.rfind("transduce: error: ", 0), 0u) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_NE(r.out.find(says), std::string::npos) << r.out;
}

CommandResult run_transduce(const std::string& args, bool merge_stderr) {
  return run_shell(std::string(TRANSDUCE_BINARY) + " " + args, merge_stderr);
}

CommandResult run_transduce_apart(const std::string& args) {
  char name[] = "/tmp/transduce_stderr_XXXXXX";
  const int fd = ::mkstemp(name);
  if (fd < 0) return {-1, "mkstemp failed", ""};
  ::close(fd);
  CommandResult r =
      run_shell("{ " + std::string(TRANSDUCE_BINARY) + " " + args + " 2>" + name + "; }", false);
  std::ifstream in(name, std::ios::binary);
  r.err.assign(std::istreambuf_iterator<char>(in), {});
  std::remove(name);
  return r;
}

CommandResult run_shell(const std::string& command, bool merge_stderr) {
  const std::string cmd = command + (merge_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed", ""};
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, ""};
}

}  // namespace transduce::testing
