#ifndef XLAC_TOOLS_LIB_RUN_STDERR_H_
#define XLAC_TOOLS_LIB_RUN_STDERR_H_

#include <streambuf>
#include <string>

namespace xlac {

// A streambuf over a file descriptor that hands the kernel whole lines, one write(2) per line (or per flush). Under
// mpirun the processes' stderr pipes are read and forwarded asynchronously, next to mpirun's own messages (the
// MPI_Abort banner); a diagnostic built by several `<<` on an unbuffered std::cerr reached the terminal in pieces with
// those messages in between. A line written in one call (<= PIPE_BUF bytes) is read whole.
class LineAtomicBuffer : public std::streambuf {
 public:
  explicit LineAtomicBuffer(int fd) : fd_(fd) {}
  ~LineAtomicBuffer() override { Emit(); }

 protected:
  int_type overflow(int_type ch) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  // Writes whole lines of pending_ (everything when `all`).
  void Emit(bool all = true);

  int fd_;
  std::string pending_;
};

}  // namespace xlac

#endif  // XLAC_TOOLS_LIB_RUN_STDERR_H_
