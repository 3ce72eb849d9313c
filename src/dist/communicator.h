// How the processes of a data-parallel run agree (DESIGN.md: dist/). The trainer talks to this
// interface; MPI (mpi_communicator.cc) implements it when transduce is built with TRANSDUCE_MPI,
// and a run of one process uses the trivial SingleProcess below.
#pragma once

#include <cstdint>

namespace transduce {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Element-wise sums across ranks, in place; every rank ends with the same values. `what` names
  // the operation in the message given when the other ranks do not answer in time.
  virtual void sum(float* data, int64_t n, const char* what) = 0;
  virtual void sum(double* data, int64_t n, const char* what) = 0;
  // Rank 0's bytes to every rank.
  virtual void broadcast(void* data, int64_t bytes, const char* what) = 0;
  // True on every rank when every rank passed the same value.
  virtual bool agree(uint64_t value, const char* what) = 0;
  // Ends every rank of the job at once with `code` (after this rank's error was printed).
  [[noreturn]] virtual void abort(int code) = 0;
};

class SingleProcess final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void sum(float*, int64_t, const char*) override {}
  void sum(double*, int64_t, const char*) override {}
  void broadcast(void*, int64_t, const char*) override {}
  bool agree(uint64_t, const char*) override { return true; }
  [[noreturn]] void abort(int code) override;
};

}  // namespace transduce
